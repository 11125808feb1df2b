import { CHANGE_SET_STATES } from '../domain/change-sets/resource.js';
import { answer, json, problems, ref, requestIdHeader } from '../openapi/operation-kit.js';
import { CHANGE_SET, EXAMPLE, ID, ONE, op, RESOLVE_BODY, STEP } from './operation-parts.js';
import { diff, stage } from './review-operations.js';

/** The OpenAPI operations of the change sets' routes (section 17). */

export const changeSetsOperations = {
  stage,
  diff,
  create: op(
    'openChangeSet',
    'Open a change set',
    'Its `base` is the position of the log now; it stays open as long as needed.',
    {
      requestBody: {
        required: true,
        content: json(
          {
            type: 'object',
            properties: {
              name: { type: 'string', minLength: 1, maxLength: 200, description: 'what it is for' },
              description: { type: ['string', 'null'], maxLength: 2000, description: 'more about it' },
            },
            required: ['name'],
            additionalProperties: false,
          },
          { name: 'move Paris to prod-2' },
        ),
      },
      responses: {
        201: {
          ...answer('opened', ONE, { change_set: { ...EXAMPLE, staged: 0 } }),
          headers: { ...requestIdHeader, Location: ref('headers', 'Location') },
        },
        ...problems('BadRequest', 'UnsupportedMediaType', 'ValidationFailed'),
      },
    },
  ),
  list: op('listChangeSets', 'Change sets, oldest first', 'Every change set, or those in one state.', {
    parameters: [
      {
        name: 'state',
        in: 'query',
        required: false,
        description: 'only those in this state',
        schema: { type: 'string', enum: [...CHANGE_SET_STATES] },
      },
    ],
    responses: {
      200: answer(
        'the change sets',
        {
          type: 'object',
          properties: { items: { type: 'array', items: CHANGE_SET, description: 'in id order' } },
          required: ['items'],
        },
        { items: [EXAMPLE] },
      ),
      ...problems('BadRequest'),
    },
  }),
  get: op('getChangeSet', 'One change set', 'Its state and how many writes it holds.', {
    parameters: ID,
    responses: { 200: answer('the change set', ONE, { change_set: EXAMPLE }), ...problems('BadRequest', 'NotFound') },
  }),
  staged: op(
    'listStagedWrites',
    "A change set's writes",
    'Each staged write, in order: its kind, resource and entry (never its values).',
    {
      parameters: ID,
      responses: {
        200: answer(
          'the staged writes',
          {
            type: 'object',
            properties: {
              items: {
                type: 'array',
                description: 'in the order they were staged',
                items: {
                  type: 'object',
                  properties: {
                    operation: { type: 'integer', description: 'the staged write' },
                    kind: { type: 'string', description: 'create, replace, patch, delete or revert' },
                    resource: { type: 'string', description: 'its resource' },
                    id: { type: ['integer', 'null'], description: 'its entry' },
                    at: { type: 'string', format: 'date-time', description: 'when it was staged' },
                  },
                  required: ['operation', 'kind', 'resource', 'id', 'at'],
                },
              },
            },
            required: ['items'],
          },
          { items: [{ operation: 31, kind: 'patch', resource: 'servers', id: 42, at: '2026-11-29T10:01:00.000Z' }] },
        ),
        ...problems('BadRequest', 'NotFound'),
      },
    },
  ),
  merge: op(
    'mergeChangeSet',
    'Merge a change set: one append',
    "Every staged write decided again on the configuration now; conflicts (fields changed since `base` to another value) are a 409 listing them unless `resolve` says which side wins each; then all of it is one append — a reader sees all or none — every event carrying the change set's id, with `ChangeSetMerged`. A second merge is a 409 `already_merged`. A policy naming `change-set-merge` makes it an approval (202).",
    {
      parameters: ID,
      requestBody: RESOLVE_BODY,
      responses: {
        200: answer('merged', ONE, { change_set: { ...EXAMPLE, state: 'merged' } }),
        202: ref('responses', 'Held'),
        ...STEP,
      },
    },
  ),
  revert: op(
    'revertChangeSet',
    'Undo a merged change set: one append',
    'Each entry the merge touched goes back to its version just before the merge (one it created is deleted); entries others changed since are a 409 listing each field, unless `resolve` says which side wins (`main`: left as they are).',
    {
      parameters: ID,
      requestBody: RESOLVE_BODY,
      responses: { 200: answer('reverted', ONE, { change_set: { ...EXAMPLE, state: 'reverted' } }), ...STEP },
    },
  ),
  close: op(
    'closeChangeSet',
    'Drop an open change set',
    'Nothing of it is applied; its staged writes stay in its history.',
    {
      parameters: ID,
      responses: {
        200: answer('closed', ONE, { change_set: { ...EXAMPLE, state: 'closed' } }),
        ...problems('BadRequest', 'NotFound', 'Conflict'),
      },
    },
  ),
};
