import type { OperationObject, ParameterObject, SchemaObject } from 'openapi3-ts/oas31';
import type { Resource } from '../domain/shared/declaration.js';
import type { RouteDescriptor } from '../http/routes/descriptors.js';
import { listParameters, searchedFields } from '../schemas/list-filters.js';
import { entryExample, plural as plurals } from './examples.js';
import { json, problems, ref, requestIdHeader } from './operation-kit.js';

/** The OpenAPI operations of the configuration routes that read: a list, an entry, its history. */

export function common(route: RouteDescriptor): Pick<OperationObject, 'tags' | 'parameters'> {
  const id = route.path.includes('{id}') ? [ref('parameters', 'Id')] : [];
  return { tags: [route.resource], parameters: [...id, ref('parameters', 'XRequestId')] };
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

export function list(route: RouteDescriptor, resource: Resource): OperationObject {
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

export function read(route: RouteDescriptor, resource: Resource): OperationObject {
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

export function history(route: RouteDescriptor, resource: Resource): OperationObject {
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
