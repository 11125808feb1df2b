import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { EXPORT_FORMAT } from '../application/transfer.js';
import { CONFIGURATION_NAMES, resourceOf } from '../domain/resources.js';
import { entrySchema } from '../schemas/write.js';
import { entryExample } from './examples.js';
import { json, problems, ref, requestIdHeader } from './operation-kit.js';

/** An entry as GET shows it; with `secrets=sealed`, each of its secrets sealed as well. */
function exportedEntry(name: (typeof CONFIGURATION_NAMES)[number]): SchemaObject {
  const resource = resourceOf(name);
  const base = entrySchema(resource) as SchemaObject;
  const sealed = Object.fromEntries(
    resource.secretFields.map((field) => [
      `${field}_sealed`,
      {
        type: 'string' as const,
        description: `\`${field}\` sealed (AES-256-GCM) under the service's CONFIG_SECRET_KEY: only with secrets=sealed, and usable only by a service with the same key`,
      },
    ]),
  );
  return { ...base, properties: { ...base.properties, ...sealed } };
}

const DOCUMENT_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    format: { type: 'string', const: EXPORT_FORMAT, description: 'the format of this document and its version' },
    position: { type: 'integer', minimum: 0, description: 'the position of the last event the document holds' },
    at: { type: ['string', 'null'], format: 'date-time', description: 'the time of that event' },
    resources: {
      type: 'object',
      description: 'every entry of every resource, soft-deleted servers included, in id order',
      properties: Object.fromEntries(
        CONFIGURATION_NAMES.map((name) => [name, { type: 'array', items: exportedEntry(name) }]),
      ),
      required: [...CONFIGURATION_NAMES],
      additionalProperties: false,
    },
  },
  required: ['format', 'position', 'at', 'resources'],
  additionalProperties: false,
};

const DOCUMENT_EXAMPLE = {
  format: EXPORT_FORMAT,
  position: 42,
  at: '2026-11-23T09:12:00.000Z',
  resources: {
    ...Object.fromEntries(CONFIGURATION_NAMES.map((name) => [name, []])),
    tags: [entryExample(resourceOf('tags'))],
  },
};

export function exportConfiguration(): OperationObject {
  return {
    tags: ['transfer'],
    operationId: 'exportConfiguration',
    summary: 'The whole configuration as one document',
    description:
      'Every entry of every resource as GET shows it, as of now or as of `at`, in one consistent state (writes that land while it is sent are not in it). ' +
      'Streamed. With `secrets=sealed` (admin only), each password and private key is included sealed, so that `POST /fr/api/import` into a service with the same CONFIG_SECRET_KEY restores everything; without it, secrets are left out and an import must be given them again.',
    parameters: [
      ref('parameters', 'XRequestId'),
      {
        name: 'at',
        in: 'query',
        required: false,
        description:
          'an ISO 8601 date-time with an offset, or a position (e.g. `2026-11-01T00:00:00Z`, `1500`): the ' +
          'configuration as it was then',
        schema: { type: 'string' },
      },
      {
        name: 'secrets',
        in: 'query',
        required: false,
        description: 'sealed: include every secret, sealed (admin only)',
        schema: { type: 'string', enum: ['sealed'] },
      },
    ],
    responses: {
      200: { description: 'the document', headers: requestIdHeader, content: json(DOCUMENT_SCHEMA, DOCUMENT_EXAMPLE) },
      ...problems('BadRequest'),
    },
  };
}

const IMPORTED_ENTRY: SchemaObject = {
  type: 'object',
  description: 'an entry as the export shows it: its id, its fields, and optionally its sealed secrets',
  properties: {
    id: { type: 'integer', minimum: 1, description: 'kept: the entry is created or replaced under this id' },
  },
  required: ['id'],
  additionalProperties: true,
};

const IMPORT_REQUEST: SchemaObject = {
  type: 'object',
  description:
    'a document as GET /fr/api/export gives it; each entry as a POST (new id) or a PUT (existing id) takes it, read-only fields ignored, `<secret>_sealed` accepted',
  properties: {
    format: { type: 'string', const: EXPORT_FORMAT },
    position: { type: 'integer', description: 'accepted and ignored' },
    at: { type: ['string', 'null'], description: 'accepted and ignored' },
    resources: {
      type: 'object',
      properties: Object.fromEntries(
        CONFIGURATION_NAMES.map((name) => [name, { type: 'array', items: IMPORTED_ENTRY }]),
      ),
    },
  },
  required: ['format', 'resources'],
};

const IMPORT_RESULT: SchemaObject = {
  type: 'object',
  properties: {
    created: { type: 'integer', minimum: 0, description: 'entries whose id did not exist' },
    updated: { type: 'integer', minimum: 0, description: 'existing entries the document changed' },
    unchanged: { type: 'integer', minimum: 0, description: 'existing entries already as the document has them' },
    dry_run: { type: 'boolean', description: 'true: checked only, nothing recorded' },
  },
  required: ['created', 'updated', 'unchanged', 'dry_run'],
  additionalProperties: false,
};

export function importConfiguration(): OperationObject {
  return {
    tags: ['transfer'],
    operationId: 'importConfiguration',
    summary: 'Import a whole configuration, all or nothing',
    description:
      'Admin only. Each entry is created with its id, or replaced if its id exists, under every rule of POST and PUT (uniqueness, references, guards), resources in dependency order, ' +
      'all in one append: either every entry is recorded or none is. Any problem is a 422 that lists every problem of every entry, each with a path such as `resources.servers[3].ip`. ' +
      '`dry_run=true` checks everything and records nothing, with one exception: a caller whose token may read ' +
      'secrets gets the secrets it sends compared with the stored ones, and that comparison is recorded ' +
      '(`SecretsCompared`, the entries, never a value); for any other caller a dry run compares no secret, and an ' +
      'entry that sends one counts as updated, so that it never tells whether a secret matches. Importing the same document again records nothing (every entry unchanged). ' +
      'A server with `is_deleted: true` ends soft-deleted, `false` restores a deleted one, left out keeps its state. ' +
      'Entries the document does not hold are left as they are. The body is read as a stream, held to 64 MiB in ' +
      'all, 256 KiB per entry and 200,000 entries (413 past any of them; a body that is not such a document is a 400 at ' +
      'its first wrong character, and the rest is not read): larger inventories go through the CLI ' +
      '(`pmacontrol-config import FILE`).',
    parameters: [
      ref('parameters', 'XRequestId'),
      {
        name: 'dry_run',
        in: 'query',
        required: false,
        description: 'true: check only',
        schema: { type: 'string', enum: ['true', 'false'], default: 'false' },
      },
    ],
    requestBody: { required: true, content: json(IMPORT_REQUEST, DOCUMENT_EXAMPLE) },
    responses: {
      200: {
        description: 'imported (or, with dry_run, importable)',
        headers: requestIdHeader,
        content: json(IMPORT_RESULT, { created: 120, updated: 3, unchanged: 40, dry_run: false }),
      },
      ...problems('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType', 'ValidationFailed', 'Unavailable'),
    },
  };
}
