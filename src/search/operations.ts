import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { answer, problems } from '../openapi/operation-kit.js';

/** The answer of a search. */
const FOUND = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      description: 'best first',
      items: {
        type: 'object',
        properties: {
          resource: { type: 'string', description: 'its resource' },
          id: { type: 'integer', description: 'its id' },
          label: { type: 'string', description: 'its name now (its last one, deleted)' },
          deleted: { type: 'boolean', description: 'whether it is deleted (hard or soft)' },
          matched: {
            type: 'object',
            description: 'the name that matched',
            properties: {
              field: { type: 'string', description: 'the field' },
              value: { type: 'string', description: 'the value' },
              current: { type: 'boolean', description: 'held now (false: held before)' },
            },
            required: ['field', 'value', 'current'],
          },
        },
        required: ['resource', 'id', 'label', 'deleted', 'matched'],
      },
    },
    past_read: { type: 'boolean', description: 'whether past names are all indexed yet' },
  },
  required: ['items', 'past_read'],
};

/** The OpenAPI operation of the search (section 13). */
export function searchOperation(): OperationObject {
  return {
    tags: ['search'],
    operationId: 'search',
    summary: 'Find entries by any name they hold or held',
    description:
      "Every entry of the configuration whose name, display name, ip, hostname, dns, libelle, path, user or tag name — now or as it was — holds `q`, compared as MariaDB's collation compares (case and accents folded); best first: the whole name, then its start, then inside it, a name held now before a past one, a live entry before a deleted one. `past_read` is false for a while after a start, until the past names are read from the change log.",
    parameters: [
      {
        name: 'q',
        in: 'query',
        required: true,
        description: 'what to look for',
        schema: { type: 'string', minLength: 1, maxLength: 200 },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'how many, 1 to 200 (20)',
        schema: { type: 'integer', minimum: 1, maximum: 200 },
      },
    ],
    responses: {
      200: answer('the entries found', FOUND as SchemaObject, {
        items: [
          {
            resource: 'servers',
            id: 12,
            label: 'db-paris-03',
            deleted: false,
            matched: { field: 'name', value: 'db-paris-02', current: false },
          },
        ],
        past_read: true,
      }),
      ...problems('BadRequest'),
    },
  };
}
