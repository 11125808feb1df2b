// Over 300 lines: the OpenAPI operations of the eight configuration routes, one function each, with the helpers they share.
import type {
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  ResponsesObject,
  SchemaObject,
} from 'openapi3-ts/oas31';
import { resourceOf } from '../domain/resources.js';
import type { Resource } from '../domain/shared/declaration.js';
import { listParameters, searchedFields } from '../http/request.js';
import type { RouteDescriptor } from '../http/routes/descriptors.js';
import { PROBLEMS } from './components.js';
import { a, entryExample, patchExample, plural as plurals } from './examples.js';

export const ref = (kind: string, name: string): ReferenceObject => ({ $ref: `#/components/${kind}/${name}` });
export const problems = (...names: string[]): ResponsesObject =>
  Object.fromEntries(names.map((n) => [PROBLEMS[n].status, ref('responses', n)]));
export const requestIdHeader = { 'X-Request-ID': ref('headers', 'XRequestId') };
export const json = (schema: SchemaObject | ReferenceObject | object, example?: unknown) => ({
  'application/json': { schema: schema as SchemaObject, ...(example === undefined ? {} : { example }) },
});

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

function common(route: RouteDescriptor): Pick<OperationObject, 'tags' | 'parameters'> {
  const id = route.path.includes('{id}') ? [ref('parameters', 'Id')] : [];
  return { tags: [route.resource], parameters: [...id, ref('parameters', 'XRequestId')] };
}

function writeBody(resource: Resource, mode: 'create' | 'replace' | 'patch'): RequestBodyObject {
  const body = ref('schemas', `${resource.declaration.title}${capitalised(mode)}`);
  const example = mode === 'patch' ? patchExample(resource) : resource.declaration.example;
  const merge = mode === 'patch' ? { 'application/merge-patch+json': { schema: body, example } } : {};
  return { required: true, content: { ...json(body, example), ...merge } as RequestBodyObject['content'] };
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

function queryParameters(resource: Resource): ParameterObject[] {
  const filters = Object.entries(listParameters(resource)).map(
    ([name, schema]): ParameterObject => ({
      name,
      in: 'query',
      required: false,
      description:
        name === 'id' || resource.declaration.fields[name]
          ? `only entries whose ${name} is one of these (repeat the parameter for OR; text compares case-insensitively)`
          : `only entries holding every one of these ids (repeat for AND)`,
      schema: { type: 'array', items: schema as SchemaObject },
      style: 'form',
      explode: true,
    }),
  );
  const page: ParameterObject[] = [
    {
      name: 'q',
      in: 'query',
      required: false,
      description: `case-insensitive substring of ${searchedFields(resource).join(', ')}`,
      schema: { type: 'string', maxLength: 1000 },
    },
    {
      name: 'sort',
      in: 'query',
      required: false,
      description: 'comma-separated fields, `-` before a field for descending (e.g. `-updated_at,id`); default `id`',
      schema: { type: 'string' },
    },
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
  ];
  return [...filters, ...page];
}

const AT: ParameterObject = {
  name: 'at',
  in: 'query',
  required: false,
  description:
    'time travel: the answer as of the last event at or before this moment, an ISO 8601 date-time with an offset ' +
    'or a position (e.g. `2026-11-16T09:00:00+01:00`, `1500`); a moment after the last event gives the current state',
  schema: { type: 'string' },
};

function list(route: RouteDescriptor, resource: Resource): OperationObject {
  const { title, plural } = resource.declaration;
  const schema = {
    type: 'object',
    properties: {
      items: { type: 'array', items: ref('schemas', title) },
      total: { type: 'integer', minimum: 0, description: 'matching entries before limit/offset' },
      as_of: ref('schemas', 'AsOf'),
    },
    required: ['items', 'total'],
  };
  return {
    ...common(route),
    operationId: `list${plural}`,
    summary: `List ${plurals(resource.declaration.label)}`,
    description: `Every entry in id order${resource.declaration.deletion === 'soft' ? ', soft-deleted ones included' : ''}. The query parameters filter, search, sort and page it; an unknown or malformed one is a 400.`,
    parameters: [...common(route).parameters!, ...queryParameters(resource), AT],
    responses: {
      200: {
        description: 'the entries',
        headers: requestIdHeader,
        content: json(schema, { items: [entryExample(resource)], total: 1 }),
      },
      ...problems('BadRequest'),
    },
  };
}

function read(route: RouteDescriptor, resource: Resource): OperationObject {
  const { title } = resource.declaration;
  const headers = { ...requestIdHeader, ETag: ref('headers', 'ETag') };
  return {
    ...common(route),
    operationId: `get${title}`,
    summary: `Read one ${resource.declaration.label}`,
    description:
      'The entry and its version in `ETag`; a hard-deleted entry is a 404 `deleted`. With `at`, the entry as it was ' +
      'then (404 `not_found` if not created yet, `deleted` if hard-deleted by then), with `as_of` and the ETag of that version.',
    parameters: [...common(route).parameters!, ref('parameters', 'IfNoneMatch'), AT],
    responses: {
      200: {
        description: 'the entry',
        headers,
        content: json(
          {
            type: 'object',
            properties: { item: ref('schemas', title), as_of: ref('schemas', 'AsOf') },
            required: ['item'],
          },
          { item: entryExample(resource) },
        ),
      },
      304: { description: 'If-None-Match matched the current version', headers },
      ...problems('BadRequest', 'NotFound'),
    },
  };
}

function create(route: RouteDescriptor, resource: Resource): OperationObject {
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

function change(route: RouteDescriptor, resource: Resource, mode: 'replace' | 'patch'): OperationObject {
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

function remove(route: RouteDescriptor, resource: Resource): OperationObject {
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

function history(route: RouteDescriptor, resource: Resource): OperationObject {
  const { title } = resource.declaration;
  const example = {
    position: 8,
    revision: 0,
    type: `${title}Created`,
    at: '2026-01-15T09:30:00.000Z',
    actor: 'anonymous',
    request_id: '7d0f3c52-1b7e-4c1e-9a51-0c51a1c1a0e1',
    data: { id: 1 },
    diff: [],
  };
  const schema = {
    type: 'object',
    properties: { items: { type: 'array', items: ref('schemas', 'HistoryItem') } },
    required: ['items'],
  };
  return {
    ...common(route),
    operationId: `get${title}History`,
    summary: `Events of one ${resource.declaration.label}, oldest first`,
    description:
      "Every event that changed the entry, its own and other entries' (a deleted tag leaves the servers that carried it), with a field-by-field diff. Readable forever, also after a hard delete.",
    responses: {
      200: { description: 'the events', headers: requestIdHeader, content: json(schema, { items: [example] }) },
      ...problems('BadRequest', 'NotFound'),
    },
  };
}

/** A revert's note: the entries a hard delete changed that do not hold the entry brought back. */
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

function revert(route: RouteDescriptor, resource: Resource): OperationObject {
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
export function configOperation(route: RouteDescriptor): OperationObject {
  const resource = resourceOf(route.resource);
  switch (route.kind) {
    case 'list':
      return list(route, resource);
    case 'read':
      return read(route, resource);
    case 'create':
      return create(route, resource);
    case 'replace':
    case 'patch':
      return change(route, resource, route.kind);
    case 'delete':
      return remove(route, resource);
    case 'history':
      return history(route, resource);
    case 'revert':
      return revert(route, resource);
  }
}
