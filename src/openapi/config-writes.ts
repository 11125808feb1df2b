import type { OperationObject, RequestBodyObject, SchemaObject } from 'openapi3-ts/oas31';
import type { Resource } from '../domain/shared/declaration.js';
import type { FieldSpec } from '../domain/shared/fields.js';
import type { RouteDescriptor } from '../http/routes/descriptors.js';
import { common } from './config-reads.js';
import { a, entryExample, patchExample } from './examples.js';
import { json, problems, ref, requestIdHeader } from './operation-kit.js';

/** The OpenAPI operations of the configuration routes that write: create, replace, patch, delete, revert. */

const WRITE_PROBLEMS = [
  'BadRequest',
  'NotFound',
  'Conflict',
  'PreconditionFailed',
  'PayloadTooLarge',
  'UnsupportedMediaType',
  'ValidationFailed',
  'Unavailable',
];

const capitalised = (mode: string) => `${mode[0].toUpperCase()}${mode.slice(1)}`;

function writeBody(resource: Resource, mode: 'create' | 'replace' | 'patch'): RequestBodyObject {
  const body = ref('schemas', `${resource.declaration.title}${capitalised(mode)}`);
  const example = mode === 'patch' ? patchExample(resource) : resource.declaration.example;
  const merge = mode === 'patch' ? { 'application/merge-patch+json': { schema: body, example } } : {};
  return { required: true, content: { ...json(body, example), ...merge } as RequestBodyObject['content'] };
}

/**
 * The secrets the service makes when a creation leaves them out (an event rule's signing key): shown
 * in `made`, this once.
 */
function madeSchema(resource: Resource): Record<string, SchemaObject> {
  const made = resource.secretFields.filter((field) => (resource.declaration.fields[field] as FieldSpec).made);
  if (made.length === 0) return {};
  const properties = Object.fromEntries(
    made.map((field) => [field, { type: 'string', description: `the ${field} made, in plain text` } as SchemaObject]),
  );
  const description =
    'the secrets the service made because the creation left them out, shown this once (never again, not even ' +
    'to a retry with the same Idempotency-Key)';
  return { made: { type: 'object', properties, additionalProperties: false, description } };
}

function written(resource: Resource, status: 200 | 201, extra: Record<string, SchemaObject>) {
  const headers = {
    ...requestIdHeader,
    ETag: ref('headers', 'ETag'),
    ...(status === 201 ? { Location: ref('headers', 'Location') } : {}),
  };
  const schema = {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      resource: { type: 'string', const: resource.name },
      ...extra,
      ...(status === 201 ? madeSchema(resource) : {}),
      item: ref('schemas', resource.declaration.title),
    },
    required: ['id', 'resource', ...Object.keys(extra), 'item'],
  };
  const example = {
    id: 1,
    resource: resource.name,
    ...Object.fromEntries(Object.keys(extra).map((k) => [k, true])),
    item: entryExample(resource),
  };
  return {
    description: status === 201 ? 'created' : 'the entry as it is now (unchanged when the write changed nothing)',
    headers,
    content: json(schema, example),
  };
}

export function create(route: RouteDescriptor, resource: Resource): OperationObject {
  const { title } = resource.declaration;
  return {
    ...common(route),
    operationId: `create${title}`,
    summary: `Create ${a(resource.declaration.label)}`,
    description:
      'Required fields must be present, others take their defaults. `id` takes that id if it was never used (409 otherwise); without it, the next id above every id ever used.',
    requestBody: writeBody(resource, 'create'),
    responses: { 201: written(resource, 201, {}), ...problems(...WRITE_PROBLEMS) },
  };
}

export function change(route: RouteDescriptor, resource: Resource, mode: 'replace' | 'patch'): OperationObject {
  const { title } = resource.declaration;
  const what = `${mode === 'replace' ? 'Replace' : 'Change some fields of'} ${a(resource.declaration.label)}`;
  return {
    ...common(route),
    operationId: `${mode}${title}`,
    summary: what,
    description:
      mode === 'replace'
        ? 'Every required field must be present; an omitted optional field goes back to its default, an omitted secret keeps its stored value. A write that changes nothing records no event.'
        : 'Only the fields sent change (`application/json` or `application/merge-patch+json`); `null` clears a nullable field. A write that changes nothing records no event.',
    parameters: [...common(route).parameters!, ref('parameters', 'IfMatch')],
    requestBody: writeBody(resource, mode),
    responses: {
      200: written(resource, 200, {
        updated: { type: 'boolean', const: true },
        changed: { type: 'boolean', description: 'false when nothing changed and no event was recorded' },
      }),
      ...problems(...WRITE_PROBLEMS),
    },
  };
}

export function remove(route: RouteDescriptor, resource: Resource): OperationObject {
  const { title, deletion } = resource.declaration;
  const schema = {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      resource: { type: 'string', const: resource.name },
      deleted: { type: 'boolean', const: true },
      mode: { type: 'string', const: deletion },
    },
    required: ['id', 'resource', 'deleted', 'mode'],
  };
  return {
    ...common(route),
    operationId: `delete${title}`,
    summary: `${deletion === 'soft' ? 'Soft-delete' : 'Delete'} ${a(resource.declaration.label)}`,
    description:
      deletion === 'soft'
        ? 'The entry stays, listed, with `is_deleted: true`; a second DELETE changes nothing. `PATCH {"is_deleted": false}` restores it.'
        : 'The entry answers 404 `deleted` from then on; its history stays readable, its id is never reused. A 409 `in_use` lists the entries that still reference it.',
    parameters: [...common(route).parameters!, ref('parameters', 'IfMatch')],
    responses: {
      200: {
        description: 'deleted',
        headers: requestIdHeader,
        content: json(schema, { id: 1, resource: resource.name, deleted: true, mode: deletion }),
      },
      ...problems('BadRequest', 'NotFound', 'Conflict', 'PreconditionFailed', 'ValidationFailed', 'Unavailable'),
    },
  };
}

const NOT_RESTORED = {
  type: 'array',
  description:
    'when the revert brought back a hard-deleted entry: the entries its delete changed (a server that lost ' +
    'a deleted tag, a soft-deleted server moved to client 99) that still do not hold it; a revert brings ' +
    'back one entry, and a PATCH of each puts it back where it was',
  items: {
    type: 'object',
    properties: {
      resource: { type: 'string', description: 'the resource of the entry the delete changed' },
      id: { type: 'integer', description: 'its id' },
      field: { type: 'string', description: 'the field that held the reverted entry, and does not now' },
    },
    required: ['resource', 'id', 'field'],
  },
};

export function revert(route: RouteDescriptor, resource: Resource): OperationObject {
  const { title } = resource.declaration;
  const body = {
    type: 'object',
    properties: { version: { type: 'integer', minimum: 1 } },
    required: ['version'],
    additionalProperties: false,
  };
  const answer = {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      resource: { type: 'string', const: resource.name },
      reverted_to: { type: 'integer' },
      references_not_restored: NOT_RESTORED,
      item: ref('schemas', title),
    },
    required: ['id', 'resource', 'reverted_to', 'item'],
  };
  const headers = { ...requestIdHeader, ETag: ref('headers', 'ETag') };
  return {
    ...common(route),
    operationId: `revert${title}`,
    summary: `Make ${a(resource.declaration.label)} what it was at a version`,
    description:
      'One new event (`' +
      resource.events.reverted +
      '`, `data.to_version`) gives the entry the values it had at that ' +
      'version, secrets included, under every rule of a PUT (uniqueness, references, guards; `If-Match` honoured). ' +
      'A hard-deleted entry comes back with its id, alone: the entries its delete changed (the servers that ' +
      'carried a deleted tag) stay as they are, and `references_not_restored` lists them. A soft-deleted one ' +
      'reverted to a live version is restored. The version keeps counting up. A version the entry never had is ' +
      'a 422 on `version`.',
    parameters: [...common(route).parameters!, ref('parameters', 'IfMatch')],
    requestBody: { required: true, content: json(body, { version: 1 }) as RequestBodyObject['content'] },
    responses: {
      200: {
        description: 'reverted (or already so)',
        headers,
        content: json(answer, { id: 1, resource: resource.name, reverted_to: 1, item: entryExample(resource) }),
      },
      ...problems(...WRITE_PROBLEMS),
    },
  };
}

/** The OpenAPI operation of one configuration route, from the resource's declaration. */
