import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { APPROVAL_STATES } from '../domain/approvals/resource.js';
import { APPROVAL_EXAMPLE, answer, json, problems, query, ref } from '../openapi/operation-kit.js';

/** The OpenAPI operations of the approvals' routes (section 16). */

const TAGS = ['approvals'];
const APPROVAL = ref('schemas', 'Approval');
const ONE: SchemaObject = {
  type: 'object',
  properties: { approval: APPROVAL },
  required: ['approval'],
  additionalProperties: false,
};
/** The core's example approval, voted and approved. */
const EXAMPLE = {
  ...APPROVAL_EXAMPLE,
  state: 'approved',
  votes: [
    { actor: 'bob', role: 'admin', vote: 'approve', reason: null, at: '2026-11-29T10:05:00.000Z' },
    { actor: 'carol', role: 'admin', vote: 'approve', reason: 'checked', at: '2026-11-29T10:07:00.000Z' },
  ],
  updated_at: '2026-11-29T10:07:00.000Z',
  version: 3,
};

const REASON_BODY = (required: boolean) => ({
  required,
  content: json(
    {
      type: 'object',
      properties: { reason: { type: 'string', minLength: 1, maxLength: 1000, description: 'why' } },
      ...(required ? { required: ['reason'] } : {}),
      additionalProperties: false,
    },
    { reason: 'checked with the DBA on call' },
  ),
});
const STEP_PROBLEMS = problems(
  'BadRequest',
  'NotFound',
  'Conflict',
  'Gone',
  'UnsupportedMediaType',
  'ValidationFailed',
);

function list(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'listApprovals',
    summary: 'Approvals, oldest first',
    description:
      'Every approval, filtered: `state` (as of now: a pending one past its expiry is `expired`), `requester` ' +
      '(a token name), `approver=me` (the pending ones the caller may still vote on: not its own, not voted ' +
      'yet, an approver of a policy that held it). Pages of `limit` (100 by default), `next` the following one.',
    parameters: [
      query('state', 'only approvals in this state', { type: 'string', enum: [...APPROVAL_STATES] }),
      query('requester', 'only the requests of this token name', { type: 'string' }),
      query('approver', '`me`: only those waiting for my vote', { type: 'string', enum: ['me'] }),
      query('after', 'only approvals after this id', { type: 'integer', minimum: 0 }),
      query('limit', 'how many, 1 to 1000', { type: 'integer', minimum: 1, maximum: 1000 }),
    ],
    responses: {
      200: answer(
        'a page of approvals',
        {
          type: 'object',
          properties: {
            items: { type: 'array', items: APPROVAL, description: 'in id order' },
            next: { type: ['string', 'null'], description: 'the next page, null: none' },
          },
          required: ['items', 'next'],
        },
        { items: [EXAMPLE], next: null },
      ),
      ...problems('BadRequest'),
    },
  };
}

function get(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'getApproval',
    summary: 'One approval',
    description: 'The approval: what was asked, what it would change (secrets `[redacted]`), the policies, the votes.',
    parameters: [ref('parameters', 'Id')],
    responses: { 200: answer('the approval', ONE, { approval: EXAMPLE }), ...problems('BadRequest', 'NotFound') },
  };
}

function vote(kind: 'approve' | 'reject'): () => OperationObject {
  return () => ({
    tags: TAGS,
    operationId: kind === 'approve' ? 'approveApproval' : 'rejectApproval',
    summary: kind === 'approve' ? 'Approve a pending request' : 'Reject a pending request (it ends there)',
    description:
      'By a token a policy that held it names (its role, or a higher one, or its name); never by the requester ' +
      '(403 `self_approval`), once per token name (409 `already_voted`), only while pending (409 `not_open`; 410 ' +
      `\`expired\`, recorded). ${kind === 'approve' ? 'Once every policy has its approvals, the state is `approved`.' : 'A reason is required.'}`,
    parameters: [ref('parameters', 'Id')],
    requestBody: REASON_BODY(kind === 'reject'),
    responses: { 200: answer('the approval after the vote', ONE, { approval: EXAMPLE }), ...STEP_PROBLEMS },
  });
}

function withdraw(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'withdrawApproval',
    summary: 'Take a request back',
    description: 'By its requester only, while pending or approved.',
    parameters: [ref('parameters', 'Id')],
    requestBody: REASON_BODY(false),
    responses: { 200: answer('the approval, withdrawn', ONE, { approval: EXAMPLE }), ...STEP_PROBLEMS },
  };
}

const RESULT: SchemaObject = {
  type: 'object',
  description: 'the entry the execution wrote',
  properties: {
    resource: { type: 'string', description: 'its resource' },
    id: { type: 'integer', description: 'its id' },
    version: { type: ['integer', 'null'], description: 'its version now (null: deleted)' },
    deleted: { type: 'boolean', description: 'whether it no longer exists' },
  },
  required: ['resource', 'id', 'version', 'deleted'],
};

function execute(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'executeApproval',
    summary: 'Run an approved request, once',
    description:
      'By its requester: exactly the request that was held runs, every rule checked again now, recorded with ' +
      '`ApprovalExecuted` in one append (every event it causes carries the approval id). At most once, whatever ' +
      'the instances or retries: a second execution is a 409 `already_executed`. If its target changed since the ' +
      'request, it becomes `stale` (412) and must be asked again; past its expiry, 410. A secret read answers ' +
      'the secret this once; a token issue answers the token this once.',
    parameters: [ref('parameters', 'Id')],
    responses: {
      200: answer(
        'executed',
        {
          type: 'object',
          properties: {
            approval: APPROVAL,
            result: RESULT,
            secrets: {
              type: 'object',
              additionalProperties: { type: ['string', 'null'] },
              description: 'a secret read: each secret field in plain text, this once',
            },
            token: { type: 'string', description: 'a token issue: the token, this once' },
            import: { type: 'object', description: "an import: its counts, as the import's own answer" },
            change_set: { type: 'object', description: "a change set's merge: the change set, merged" },
          },
          required: ['approval'],
          additionalProperties: false,
        },
        {
          approval: { ...EXAMPLE, state: 'executed' },
          result: { resource: 'servers', id: 42, version: null, deleted: true },
        },
      ),
      ...problems('BadRequest', 'NotFound', 'Conflict', 'PreconditionFailed', 'Gone', 'ValidationFailed'),
    },
  };
}

export const approvalsOperations = {
  list,
  get,
  approve: vote('approve'),
  reject: vote('reject'),
  withdraw,
  execute,
};
