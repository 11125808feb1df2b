import {
  type OpenAPIObject,
  OpenApiBuilder,
  type OperationObject,
  type ParameterObject,
  type ReferenceObject,
  type ResponsesObject,
  type SchemaObject,
} from 'openapi3-ts/oas31';
import { OPENAPI_PATH, ROUTES, type RouteDescriptor } from '../http/routes/descriptors.js';
import { commonOutput } from '../schemas/resource.js';
import { SCHEMAS } from '../schemas/resources.js';
import { documentedWriteSchema, entrySchema } from '../schemas/write.js';
import { PROBLEMS, sharedComponents } from './components.js';

const ref = (kind: string, name: string): ReferenceObject => ({ $ref: `#/components/${kind}/${name}` });
const problems = (...names: string[]): ResponsesObject =>
  Object.fromEntries(names.map((n) => [statusOf(n), ref('responses', n)]));
const statusOf = (name: string) => PROBLEMS[name].status;
const requestIdHeader = { 'X-Request-ID': ref('headers', 'XRequestId') };
const json = (schema: SchemaObject | ReferenceObject | object, example?: unknown) => ({
  'application/json': { schema: schema as SchemaObject, ...(example === undefined ? {} : { example }) },
});

function operation(route: RouteDescriptor): OperationObject {
  const schema = SCHEMAS[route.resource];
  const title = schema.title;
  const item = ref('schemas', title);
  const example = (entrySchema(schema, commonOutput()).example ?? {}) as Record<string, unknown>;
  const idParams: (ParameterObject | ReferenceObject)[] = route.path.includes('{id}') ? [ref('parameters', 'Id')] : [];
  const common = {
    tags: [route.resource],
    parameters: [...idParams, ref('parameters', 'XRequestId')] as (ParameterObject | ReferenceObject)[],
  };
  const writeBody = (mode: 'create' | 'replace' | 'patch') => {
    const body = ref('schemas', `${title}${mode[0].toUpperCase()}${mode.slice(1)}`);
    const content = {
      ...json(body, schema.example),
      ...(mode === 'patch' ? { 'application/merge-patch+json': { schema: body } } : {}),
    };
    return { required: true, content };
  };
  const written = (status: 200 | 201, extra: Record<string, object>) => ({
    description: status === 201 ? 'created' : 'the entry as it is now (unchanged when the write changed nothing)',
    headers: {
      ...requestIdHeader,
      ETag: ref('headers', 'ETag'),
      ...(status === 201 ? { Location: ref('headers', 'Location') } : {}),
    },
    content: json(
      {
        type: 'object',
        properties: { id: { type: 'integer' }, resource: { type: 'string', const: route.resource }, ...extra, item },
        required: ['id', 'resource', ...Object.keys(extra), 'item'],
      },
      {
        id: 1,
        resource: route.resource,
        ...Object.fromEntries(Object.keys(extra).map((k) => [k, k === 'changed' ? true : true])),
        item: example,
      },
    ),
  });
  const write4xx = problems(
    'BadRequest',
    'NotFound',
    'Conflict',
    'PreconditionFailed',
    'PayloadTooLarge',
    'UnsupportedMediaType',
    'ValidationFailed',
    'Unavailable',
  );
  switch (route.kind) {
    case 'list': {
      const filters = Object.entries(schema.filters ?? {}).map(
        ([name, s]): ParameterObject => ({
          name,
          in: 'query',
          required: false,
          description: name === 'tag' ? 'servers carrying this tag id' : `only entries whose ${name} equals this`,
          schema: s as SchemaObject,
        }),
      );
      return {
        ...common,
        operationId: `list${title}s`,
        summary: `List ${route.resource}`,
        description:
          'Every entry ordered by id (soft-deleted servers included); the query parameters narrow it. An unknown parameter is a 400.',
        parameters: [
          ...common.parameters,
          ...filters,
          {
            name: 'limit',
            in: 'query',
            required: false,
            description: 'at most this many items',
            schema: { type: 'integer', minimum: 1 },
          },
          {
            name: 'offset',
            in: 'query',
            required: false,
            description: 'skip this many items',
            schema: { type: 'integer', minimum: 0 },
          },
        ],
        responses: {
          200: {
            description: 'the entries',
            headers: requestIdHeader,
            content: json(
              {
                type: 'object',
                properties: {
                  items: { type: 'array', items: item },
                  total: { type: 'integer', minimum: 0, description: 'matching entries before limit/offset' },
                },
                required: ['items', 'total'],
              },
              { items: [example], total: 1 },
            ),
          },
          ...problems('BadRequest', 'Unavailable'),
        },
      };
    }
    case 'read':
      return {
        ...common,
        operationId: `get${title}`,
        summary: `Read one ${title}`,
        parameters: [...common.parameters, ref('parameters', 'IfNoneMatch')],
        responses: {
          200: {
            description: 'the entry',
            headers: { ...requestIdHeader, ETag: ref('headers', 'ETag') },
            content: json({ type: 'object', properties: { item }, required: ['item'] }, { item: example }),
          },
          304: {
            description: 'If-None-Match matched the current version',
            headers: { ...requestIdHeader, ETag: ref('headers', 'ETag') },
          },
          ...problems('BadRequest', 'NotFound'),
        },
      };
    case 'create':
      return {
        ...common,
        operationId: `create${title}`,
        summary: `Create a ${title}`,
        requestBody: writeBody('create'),
        responses: { 201: written(201, {}), ...write4xx },
      };
    case 'replace':
    case 'patch':
      return {
        ...common,
        operationId: `${route.kind}${title}`,
        summary:
          route.kind === 'replace'
            ? `Replace a ${title} (omitted optional fields go back to their defaults)`
            : `Change some fields of a ${title}`,
        parameters: [...common.parameters, ref('parameters', 'IfMatch')],
        requestBody: writeBody(route.kind),
        responses: {
          200: written(200, {
            updated: { type: 'boolean', const: true },
            changed: { type: 'boolean', description: 'false when nothing changed and no event was recorded' },
          }),
          ...write4xx,
        },
      };
    case 'delete':
      return {
        ...common,
        operationId: `delete${title}`,
        summary: route.resource === 'servers' ? 'Soft-delete a Server' : `Delete a ${title}`,
        parameters: [...common.parameters, ref('parameters', 'IfMatch')],
        responses: {
          200: {
            description: 'deleted',
            headers: requestIdHeader,
            content: json(
              {
                type: 'object',
                properties: {
                  id: { type: 'integer' },
                  resource: { type: 'string', const: route.resource },
                  deleted: { type: 'boolean', const: true },
                  mode: { type: 'string', enum: ['hard', 'soft'] },
                },
                required: ['id', 'resource', 'deleted', 'mode'],
              },
              { id: 1, resource: route.resource, deleted: true, mode: route.resource === 'servers' ? 'soft' : 'hard' },
            ),
          },
          ...problems('BadRequest', 'NotFound', 'Conflict', 'PreconditionFailed', 'Unavailable'),
        },
      };
    case 'history':
      return {
        ...common,
        operationId: `get${title}History`,
        summary: `Events of one ${title}, oldest first`,
        description: 'Readable forever, also after a hard delete.',
        responses: {
          200: {
            description: 'the events',
            headers: requestIdHeader,
            content: json(
              {
                type: 'object',
                properties: { items: { type: 'array', items: ref('schemas', 'HistoryItem') } },
                required: ['items'],
              },
              {
                items: [
                  {
                    position: 8,
                    revision: 0,
                    type: `${title}Created`,
                    at: '2026-01-15T09:30:00.000Z',
                    actor: 'anonymous',
                    request_id: '7d0f3c52-1b7e-4c1e-9a51-0c51a1c1a0e1',
                    data: { id: 1 },
                  },
                ],
              },
            ),
          },
          ...problems('BadRequest', 'NotFound'),
        },
      };
  }
}

/** The OpenAPI 3.1 document, built from the same route descriptors and JSON Schemas the service runs on. */
export function buildOpenApi(version: string): OpenAPIObject {
  const builder = OpenApiBuilder.create({
    openapi: '3.1.0',
    info: {
      title: 'PmaControl configuration API',
      version,
      description: [
        'Inventory of a MariaDB/MySQL monitoring platform. Every accepted write is stored as a domain event; reads are served by projections.',
        '',
        'On every path: HEAD wherever GET is; OPTIONS answers 204 with `Allow`; any other method is a 405 `method_not_allowed`',
        'problem with `Allow`. A trailing slash is accepted. Every response carries `X-Request-ID`. Errors are',
        '`application/problem+json` with `code` and `error` (= `detail`); 500 `internal` is never the answer to client input.',
        '',
        'Authentication: none yet; every request acts as `anonymous` (recorded as the event actor).',
      ].join('\n'),
      license: { name: 'GPL-3.0-or-later', identifier: 'GPL-3.0-or-later' },
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'the default local instance' }],
    // No authentication yet: stated explicitly rather than left undefined.
    security: [],
    paths: {},
    components: sharedComponents(),
  });
  for (const schema of Object.values(SCHEMAS)) {
    builder.addTag({ name: schema.resource, description: `${schema.title} entries` });
    builder.addSchema(schema.title, entrySchema(schema, commonOutput()));
    for (const mode of ['create', 'replace', 'patch'] as const) {
      builder.addSchema(`${schema.title}${mode[0].toUpperCase()}${mode.slice(1)}`, documentedWriteSchema(schema, mode));
    }
  }
  const paths: Record<string, Record<string, OperationObject>> = {};
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  for (const [path, operations] of Object.entries(paths)) builder.addPath(path, operations);
  builder.addTag({ name: 'meta', description: 'The API itself' });
  builder.addPath(OPENAPI_PATH, {
    get: {
      tags: ['meta'],
      operationId: 'getOpenApi',
      summary: 'This document',
      responses: {
        200: { description: 'the OpenAPI 3.1 document', headers: requestIdHeader, content: json({ type: 'object' }) },
        ...problems('BadRequest'),
      },
    },
  });
  return builder.getSpec();
}
