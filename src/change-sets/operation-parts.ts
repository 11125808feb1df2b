import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { CHANGE_SET_STATES } from '../domain/change-sets/resource.js';
import { json, problems, ref } from '../openapi/operation-kit.js';

/** What the OpenAPI operations of the change sets' routes share (section 17). */

export const TAGS = ['change-sets'];
export const TEXT_OR_NULL = (description: string): SchemaObject => ({ type: ['string', 'null'], description });

export const CHANGE_SET: SchemaObject = {
  type: 'object',
  properties: {
    id: { type: 'integer', description: "the change set's id: the value of Change-Set" },
    name: { type: 'string', description: 'what it is for' },
    description: TEXT_OR_NULL('more about it'),
    state: { type: 'string', enum: [...CHANGE_SET_STATES], description: 'open → merged → reverted; open → closed' },
    base: { type: 'integer', description: 'the position of the log when it was opened' },
    created_by: { type: 'string', description: 'who opened it' },
    staged: { type: 'integer', description: 'how many writes it holds' },
    merge_request_id: TEXT_OR_NULL(
      'the request that merged it (its events share it: `GET /fr/api/changes?change_set=`)',
    ),
    merged_by: TEXT_OR_NULL('who merged it'),
    revert_request_id: TEXT_OR_NULL('the request that reverted it'),
    created_at: { type: 'string', format: 'date-time', description: 'when it was opened' },
    updated_at: { type: 'string', format: 'date-time', description: 'its last step' },
    version: { type: 'integer', description: 'its steps so far' },
  },
  additionalProperties: false,
};
CHANGE_SET.required = Object.keys(CHANGE_SET.properties!);

export const EXAMPLE = {
  id: 4,
  name: 'move Paris to prod-2',
  description: null,
  state: 'open',
  base: 1207,
  created_by: 'alice',
  staged: 2,
  merge_request_id: null,
  merged_by: null,
  revert_request_id: null,
  created_at: '2026-11-29T10:00:00.000Z',
  updated_at: '2026-11-29T10:00:00.000Z',
  version: 1,
};

export const ONE: SchemaObject = {
  type: 'object',
  properties: { change_set: { ...CHANGE_SET, description: 'the change set' } },
  required: ['change_set'],
};
export const STEP = problems('BadRequest', 'NotFound', 'Conflict', 'UnsupportedMediaType', 'ValidationFailed');
export const RESOLVE_BODY = {
  required: false,
  content: json(
    {
      type: 'object',
      properties: {
        resolve: {
          type: 'object',
          description: 'per field (`servers/42/id_environment`) or entry (`servers/42`): which side wins a conflict',
          additionalProperties: { type: 'string', enum: ['change-set', 'main'] },
        },
      },
      additionalProperties: false,
    },
    { resolve: { 'servers/42/id_environment': 'change-set' } },
  ),
};

export const op =
  (operationId: string, summary: string, description: string, extra: Partial<OperationObject>) =>
  (): OperationObject => ({ tags: TAGS, operationId, summary, description, ...extra });

export const ID = [ref('parameters', 'Id')];
