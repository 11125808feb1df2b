import { answer, json, problems } from '../openapi/operation-kit.js';
import { CHANGE_SET, EXAMPLE, ID, op } from './operation-parts.js';

/** The OpenAPI operations of staging and reviewing a change set (section 17). */

export const stage = op(
  'stageWrites',
  'Stage up to 5,000 writes at once, all or none',
  'Each operation is a write of the configuration routes (`method`, `path` under `/fr/api/config`, `body`, `if_match`), checked as that route checks it, then decided on the configuration as the change set (with the operations before it) leaves it: refused as the write itself would be (its index in the problem), and then nothing is staged.',
  {
    parameters: ID,
    requestBody: {
      required: true,
      content: json(
        {
          type: 'object',
          properties: {
            operations: {
              type: 'array',
              minItems: 1,
              maxItems: 5000,
              description: 'the writes, in order',
              items: {
                type: 'object',
                properties: {
                  method: { type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE'], description: 'the write' },
                  path: {
                    type: 'string',
                    description: '`/fr/api/config/servers`, `/fr/api/config/servers/42`, `…/42/revert`',
                  },
                  body: { type: 'object', description: 'what the route takes' },
                  if_match: { type: 'string', description: 'as If-Match: checked against the change set' },
                },
                required: ['method', 'path'],
              },
            },
          },
          required: ['operations'],
          additionalProperties: false,
        },
        { operations: [{ method: 'PATCH', path: '/fr/api/config/servers/42', body: { id_environment: 7 } }] },
      ),
    },
    responses: {
      202: answer(
        'staged',
        {
          type: 'object',
          properties: {
            change_set: { ...CHANGE_SET, description: 'the change set' },
            staged: {
              type: 'array',
              description: 'each write staged: its staged write and entry',
              items: {
                type: 'object',
                properties: {
                  operation: { type: 'integer', description: 'the staged write' },
                  resource: { type: 'string', description: 'its resource' },
                  id: { type: ['integer', 'null'], description: 'its entry (a creation: the id it is given)' },
                },
                required: ['operation', 'resource', 'id'],
              },
            },
          },
          required: ['change_set', 'staged'],
        },
        { change_set: EXAMPLE, staged: [{ operation: 31, resource: 'servers', id: 42 }] },
      ),
      ...problems(
        'BadRequest',
        'NotFound',
        'Conflict',
        'PreconditionFailed',
        'PayloadTooLarge',
        'UnsupportedMediaType',
        'ValidationFailed',
      ),
    },
  },
);

export const diff = op(
  'diffChangeSet',
  "A change set's diff, with its conflicts",
  "Each field the change set changes, of each entry it touches: its value at `base`, in the change set, and in the configuration now; `conflict` where the configuration changed it since `base` to another value than the change set's. Secrets `[redacted]`. `refused`: staged writes the configuration now refuses.",
  {
    parameters: ID,
    responses: {
      200: answer(
        'the diff',
        {
          type: 'object',
          properties: {
            change_set: { ...CHANGE_SET, description: 'the change set' },
            fields: {
              type: 'array',
              description: 'entry by entry, field by field',
              items: {
                type: 'object',
                properties: {
                  resource: { type: 'string', description: 'the resource' },
                  id: { type: 'integer', description: 'the entry' },
                  field: { type: 'string', description: 'the field' },
                  base: { description: 'its value at base (null: none)' },
                  change_set: { description: 'its value in the change set' },
                  now: { description: 'its value in the configuration now' },
                  conflict: { type: 'boolean', description: 'changed since base to another value' },
                },
                required: ['resource', 'id', 'field', 'base', 'change_set', 'now', 'conflict'],
              },
            },
            refused: {
              type: 'array',
              description: 'staged writes refused on the configuration now',
              items: { type: 'object' },
            },
          },
          required: ['change_set', 'fields', 'refused'],
        },
        {
          change_set: EXAMPLE,
          fields: [
            { resource: 'servers', id: 42, field: 'id_environment', base: 1, change_set: 7, now: 3, conflict: true },
          ],
          refused: [],
        },
      ),
      ...problems('BadRequest', 'NotFound'),
    },
  },
);
