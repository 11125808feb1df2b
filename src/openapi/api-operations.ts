import type { OperationObject, ParameterObject, SchemaObject } from 'openapi3-ts/oas31';
import { COLLECTION_NAMES, CONFIGURATION_NAMES, resourceOf } from '../domain/resources.js';
import type { ApiRouteDescriptor } from '../http/routes/descriptors.js';
import { issueToken, listTokens, revokeToken, secretOperation, whoami } from './identity-operations.js';
import { json, problems, ref, requestIdHeader } from './operation-kit.js';
import { docs, docsAsset, healthz, metrics, readyz } from './ops-operations.js';
import { exportConfiguration, importConfiguration } from './transfer-operations.js';

const query = (name: string, description: string, schema: SchemaObject, example?: unknown): ParameterObject => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  ...(example === undefined ? {} : { example }),
});

const MOMENT = { type: 'string' } as SchemaObject;
const POSITION = { type: 'integer', minimum: 0 } as SchemaObject;

const FILTERS: ParameterObject[] = [
  query(
    'resource',
    'events whose entry, or one of the entries they changed in passing, is of this resource (tokens and ' +
      'event-rules for admins only: others never see their events, and asking is a 403)',
    { type: 'string', enum: [...COLLECTION_NAMES] },
  ),
  query('id', 'with resource: that entry only', { type: 'integer', minimum: 1 }),
  query('actor', 'events caused by this actor (a token name, anonymous, system)', { type: 'string', maxLength: 255 }),
  query('type', 'events of this type (e.g. `ServerUpdated`)', { type: 'string', maxLength: 255 }),
];

const CHANGE_EXAMPLE = {
  position: 42,
  revision: 1,
  type: 'ServerUpdated',
  at: '2026-11-23T09:12:00.000Z',
  actor: 'anonymous',
  request_id: 'deploy-42',
  resource: 'servers',
  id: 12,
  data: { id: 12, changes: { port: 3307 } },
  diff: [{ field: 'port', before: 3306, after: 3307 }],
  effects: [],
};

function changes(): OperationObject {
  const page = {
    type: 'object',
    properties: {
      items: { type: 'array', items: ref('schemas', 'ChangeItem') },
      next: { type: ['string', 'null'], description: 'the path and query of the next page; null on the last page' },
    },
    required: ['items', 'next'],
  };
  const csv =
    'position,at,actor,request_id,type,resource,id,field,before,after\r\n42,2026-11-23T09:12:00.000Z,anonymous,deploy-42,ServerUpdated,servers,12,port,3306,3307\r\n';
  return {
    tags: ['audit'],
    operationId: 'listChanges',
    summary: 'The change log: every recorded event, with field-by-field diffs',
    description:
      'Oldest first (or newest first with `order=desc`), 100 per page by default, filters combined with AND. ' +
      'Secrets show as "[redacted]" on whichever side holds a value. `Accept: application/x-ndjson` streams every ' +
      'matching change, one per line (`limit` applies only when given); `Accept: text/csv` gives one row per diff ' +
      'member (RFC 4180, a header row; an event that changed no field still has one row).',
    parameters: [
      ref('parameters', 'XRequestId'),
      ...FILTERS,
      query('request_id', 'events caused by this request (its X-Request-ID)', { type: 'string', maxLength: 255 }),
      query('change_set', "what a change set did: its merge's events (none while it is not merged)", {
        type: 'integer',
        minimum: 1,
      }),
      query('since', 'events at or after this time (ISO 8601 with an offset)', { type: 'string', format: 'date-time' }),
      query('until', 'events before this time (ISO 8601 with an offset)', { type: 'string', format: 'date-time' }),
      query('after', 'events after this position (with order=asc)', POSITION),
      query('before', 'events before this position (with order=desc)', POSITION),
      query('limit', 'at most this many (default 100)', { type: 'integer', minimum: 1, maximum: 1000 }),
      query('order', 'asc (oldest first, the default) or desc', { type: 'string', enum: ['asc', 'desc'] }),
    ],
    responses: {
      200: {
        description: 'a page of changes (JSON), or all of them (NDJSON, CSV)',
        headers: requestIdHeader,
        content: {
          ...json(page, { items: [CHANGE_EXAMPLE], next: '/fr/api/changes?after=42' }),
          'application/x-ndjson': { schema: { type: 'string' }, example: `${JSON.stringify(CHANGE_EXAMPLE)}\n` },
          'text/csv': { schema: { type: 'string' }, example: csv },
        },
      },
      ...problems('BadRequest'),
    },
  };
}

function changeStream(): OperationObject {
  return {
    tags: ['audit'],
    operationId: 'streamChanges',
    summary: 'The live change feed (Server-Sent Events)',
    description:
      'Stays open. Each change is one event: `id: <position>`, `event: change`, `data: <the change on one line>`. It starts ' +
      'after the `Last-Event-ID` header, or after `?after=`, or else with the next change recorded; a client that ' +
      'reconnects with its last id misses nothing. Changes made through any instance appear on every instance, in ' +
      'position order, none twice. A comment line is sent at least every 15 s while nothing happens. A client ' +
      'that leaves more than FEED_MAX_BUFFER_BYTES unread, or stops reading, is cut off (it resumes with ' +
      '`Last-Event-ID`: nothing is lost); past MAX_SUBSCRIBERS clients, a new one gets 503 with Retry-After.',
    parameters: [
      ref('parameters', 'XRequestId'),
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: 'the last position received',
        schema: { type: 'string' },
      },
      ...FILTERS,
      query('after', 'start after this position', POSITION),
    ],
    responses: {
      200: {
        description: 'the event stream',
        headers: requestIdHeader,
        content: {
          'text/event-stream': {
            schema: { type: 'string' },
            example: `id: 42\nevent: change\ndata: ${JSON.stringify(CHANGE_EXAMPLE)}\n\n`,
          },
        },
      },
      ...problems('BadRequest', 'Unavailable'),
    },
  };
}

const ENTRY_DIFF = {
  type: 'object',
  properties: { id: { type: 'integer' }, diff: { type: 'array', items: ref('schemas', 'DiffMember') } },
  required: ['id', 'diff'],
};
const PER_RESOURCE = {
  type: 'object',
  properties: {
    created: { type: 'array', items: { type: 'object', description: 'the entry as it is at `to`' } },
    updated: { type: 'array', items: ENTRY_DIFF },
    deleted: { type: 'array', items: { type: 'integer' } },
  },
  required: ['created', 'updated', 'deleted'],
};
const DIFF_SCHEMA = {
  type: 'object',
  properties: {
    from: ref('schemas', 'AsOf'),
    to: ref('schemas', 'AsOf'),
    resources: {
      type: 'object',
      properties: Object.fromEntries(CONFIGURATION_NAMES.map((r) => [r, PER_RESOURCE])),
      required: [...CONFIGURATION_NAMES],
    },
  },
  required: ['from', 'to', 'resources'],
};
const EMPTY_DIFF = { created: [], updated: [], deleted: [] };
const DIFF_EXAMPLE = {
  from: { position: 40, at: '2026-11-22T22:00:00.000Z' },
  to: { position: 42, at: '2026-11-23T09:12:00.000Z' },
  resources: {
    ...Object.fromEntries(CONFIGURATION_NAMES.map((r) => [r, EMPTY_DIFF])),
    servers: { ...EMPTY_DIFF, updated: [{ id: 12, diff: [{ field: 'port', before: 3306, after: 3307 }] }] },
  },
};
function diff(): OperationObject {
  return {
    tags: ['audit'],
    operationId: 'getDiff',
    summary: 'The net difference between two moments',
    description:
      'Per resource, the entries created, changed (field by field) and deleted between `from` and `to`. An entry changed and changed back in between is not listed.',
    parameters: [
      ref('parameters', 'XRequestId'),
      {
        name: 'from',
        in: 'query',
        required: true,
        description: 'an ISO 8601 date-time with an offset, or a position',
        schema: MOMENT,
      },
      { name: 'to', in: 'query', required: false, description: 'the same; now when left out', schema: MOMENT },
    ],
    responses: {
      200: { description: 'the differences', headers: requestIdHeader, content: json(DIFF_SCHEMA, DIFF_EXAMPLE) },
      ...problems('BadRequest'),
    },
  };
}

function openApi(): OperationObject {
  return {
    tags: ['meta'],
    operationId: 'getOpenApi',
    summary: 'This document',
    description: 'The OpenAPI 3.1 document of this API, as this instance serves it.',
    responses: {
      200: {
        description: 'the OpenAPI 3.1 document',
        headers: requestIdHeader,
        content: json(
          { type: 'object' },
          { openapi: '3.1.0', info: { title: 'PmaControl configuration API', version: '0.1.0' }, paths: {} },
        ),
      },
      ...problems('BadRequest'),
    },
  };
}

/** The OpenAPI operation of a route about the whole configuration or the API itself. */
export function apiOperation(route: ApiRouteDescriptor): OperationObject {
  const operations = { changes, changeStream, diff, openApi, whoami, listTokens, issueToken, revokeToken };
  const more = {
    secret: () => secretOperation(resourceOf(route.resource!)),
    healthz,
    readyz,
    metrics,
    docs,
    docsAsset,
  };
  const transfer = { export: exportConfiguration, import: importConfiguration };
  return { ...operations, ...more, ...transfer }[route.kind]();
}
