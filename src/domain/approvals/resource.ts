import { OPERATIONS } from '../policies/resource.js';
import { defineResource } from '../shared/declaration.js';
import { list, nullableInteger, nullableText, oneOf, secret, text } from '../shared/fields.js';
import { ROLES } from '../tokens/resource.js';

export const APPROVAL_STATES = [
  'pending',
  'approved',
  'executed',
  'rejected',
  'withdrawn',
  'expired',
  'stale',
] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/** A policy as it was when it held the request: what its approval needs, whatever becomes of the policy. */
export interface HeldBy {
  id: number;
  name: string;
  approvals: number;
  roles: string[];
  tokens: string[];
}

/** One vote: who, with which role, which way, why, when. */
export interface Vote {
  actor: string;
  role: string;
  vote: 'approve' | 'reject';
  reason: string | null;
  at: string;
}

/** What the request would change in one entry: its diff, secrets `[redacted]`. */
export interface ChangeShown {
  resource: string;
  id: number | null;
  diff: { field: string; before: unknown; after: unknown }[];
}

const HELD_BY = {
  type: 'object',
  properties: {
    id: { type: 'integer', description: "the policy's id" },
    name: { type: 'string', description: "the policy's name then" },
    approvals: { type: 'integer', description: 'the approvals it asks for' },
    roles: { type: 'array', items: { type: 'string', enum: [...ROLES] }, description: 'approver roles' },
    tokens: { type: 'array', items: { type: 'string' }, description: 'approver token names' },
  },
  required: ['id', 'name', 'approvals', 'roles', 'tokens'],
  additionalProperties: false,
};

const VOTE = {
  type: 'object',
  properties: {
    actor: { type: 'string', description: "the voter's token name" },
    role: { type: 'string', description: "the voter's role then" },
    vote: { type: 'string', enum: ['approve', 'reject'], description: 'which way' },
    reason: { type: ['string', 'null'], description: 'the reason given' },
    at: { type: 'string', description: 'when (ISO 8601 UTC)' },
  },
  required: ['actor', 'role', 'vote', 'reason', 'at'],
  additionalProperties: false,
};

const CHANGE = {
  type: 'object',
  properties: {
    resource: { type: 'string', description: 'the resource of the entry' },
    id: { type: ['integer', 'null'], description: "the entry's id (null: an entry the request would create)" },
    diff: {
      type: 'array',
      description: 'each field the request would change: before and after, secrets `[redacted]`',
      items: {
        type: 'object',
        properties: {
          field: { type: 'string', description: 'the field' },
          before: { description: 'its value now (null: none)' },
          after: { description: 'its value after the request (null: none)' },
        },
        required: ['field', 'before', 'after'],
        additionalProperties: false,
      },
    },
  },
  required: ['resource', 'id', 'diff'],
  additionalProperties: false,
};

/**
 * An approval (section 16): a request a policy held, waiting for votes, then executed once by its
 * requester. Its entries are made and changed only by the approvals wing (src/approvals/): asked
 * (`ApprovalRequested`), voted (`ApprovalVoted`), rejected, withdrawn, expired, found stale,
 * executed — each an event of its own, in the change log of every reader.
 */
export const approvals = defineResource({
  name: 'approvals',
  title: 'Approval',
  label: 'approval',
  plural: 'Approvals',
  category: 'approval',
  description: 'A request held by a policy until other people approve it.',
  fields: {
    operation: oneOf(OPERATIONS, { required: true, description: 'the operation asked for' }),
    resource: nullableText(1, 40, { description: 'the resource of its target (null: an import)' }),
    target_id: nullableInteger(1, { description: "its target's id (null: an entry to create, an import)" }),
    target_version: nullableInteger(1, {
      description: "the target's version when asked: if it changes before the execution, the approval is stale",
    }),
    requester: text(1, 64, { required: true, description: 'who asked (the token name)' }),
    request_id: text(1, 200, { required: true, description: 'the request that asked (its X-Request-Id)' }),
    policies: list<HeldBy>(HELD_BY, 1000, { required: true, description: 'the policies that held it, as they were' }),
    changes: list<ChangeShown>(CHANGE, 5000, { required: true, description: 'what it would change' }),
    request: secret(2, 16_000_000, { required: true, description: 'the request itself, sealed; never shown' }),
    state: oneOf(APPROVAL_STATES, { required: true, description: 'where it is' }),
    votes: list<Vote>(VOTE, 100, { default: [], description: 'the votes, in order' }),
    reason: nullableText(0, 1000, { description: 'why it was rejected, withdrawn, expired or found stale' }),
    expires_at: text(1, 40, { required: true, description: 'when it expires unless executed (ISO 8601 UTC)' }),
    executed_request_id: nullableText(1, 200, { description: 'the request that executed it' }),
  },
  deletion: 'hard',
  eventNames: { created: 'ApprovalRequested', updated: 'ApprovalVoted' },
  updateEvents: ['ApprovalRejected', 'ApprovalWithdrawn', 'ApprovalExpired', 'ApprovalStale', 'ApprovalExecuted'],
  example: {},
});
