import type { ResponseObject, SchemaObject } from 'openapi3-ts/oas31';
import { APPROVAL_STATES, approvals } from '../domain/approvals/resource.js';
import { OPERATIONS } from '../domain/policies/resource.js';

/**
 * An approval as the API shows it (section 16), and the 202 of a request a policy held: every gated
 * route (configuration writes, a secret read, a token's issue, an import) may answer it.
 */

const field = (name: string) => {
  const spec = approvals.declaration.fields[name as keyof typeof approvals.declaration.fields];
  return { ...spec.schema, description: spec.description } as SchemaObject;
};
const TEXT = { type: 'string' } as const;

export const APPROVAL_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    id: { type: 'integer', minimum: 1, description: "the approval's id" },
    state: {
      type: 'string',
      enum: [...APPROVAL_STATES],
      description: 'pending → approved → executed; pending → rejected, withdrawn, expired; approved → expired, stale',
    },
    operation: { type: 'string', enum: [...OPERATIONS], description: 'the operation asked for' },
    target: {
      type: ['object', 'null'],
      description: 'the entry it is about and its version when asked (null: an import)',
      properties: {
        resource: { ...TEXT, description: 'its resource' },
        id: { type: ['integer', 'null'], description: 'its id (null: an entry to create)' },
        version: { type: ['integer', 'null'], description: 'its version when asked (null: an entry to create)' },
      },
      required: ['resource', 'id', 'version'],
    },
    requester: field('requester'),
    request_id: field('request_id'),
    changes: field('changes'),
    policies: field('policies'),
    votes: field('votes'),
    reason: field('reason'),
    expires_at: { ...field('expires_at'), format: 'date-time' },
    executed_request_id: field('executed_request_id'),
    created_at: { ...TEXT, format: 'date-time', description: 'when it was asked' },
    updated_at: { ...TEXT, format: 'date-time', description: 'its last step' },
    version: { type: 'integer', minimum: 1, description: 'its steps so far (its entry version)' },
  },
  additionalProperties: false,
};
APPROVAL_SCHEMA.required = Object.keys(APPROVAL_SCHEMA.properties!);

export const APPROVAL_EXAMPLE = {
  id: 12,
  state: 'pending',
  operation: 'delete',
  target: { resource: 'servers', id: 42, version: 3 },
  requester: 'alice',
  request_id: '0193f0c2-7c1e-7d2a-9f00-5a1c9e0b1c2d',
  changes: [{ resource: 'servers', id: 42, diff: [{ field: 'is_deleted', before: false, after: true }] }],
  policies: [{ id: 1, name: 'prod-needs-two', approvals: 2, roles: ['admin'], tokens: [] }],
  votes: [],
  reason: null,
  expires_at: '2026-11-29T14:00:00.000Z',
  executed_request_id: null,
  created_at: '2026-11-29T10:00:00.000Z',
  updated_at: '2026-11-29T10:00:00.000Z',
  version: 1,
};

/** A configuration write staged in a change set (section 17): the entry as the change set would leave it. */
const STAGED: SchemaObject = {
  type: 'object',
  description: 'staged in the change set of `Change-Set`, not applied',
  properties: {
    change_set: { type: 'integer', description: 'the change set' },
    operation: { type: 'integer', description: 'the staged write' },
    resource: { type: 'string', description: 'the resource written' },
    id: { type: ['integer', 'null'], description: 'the entry (a creation: the id it is given)' },
    item: { type: ['object', 'null'], description: 'the entry as the change set would leave it (null: deleted)' },
  },
  required: ['change_set', 'operation', 'resource', 'id', 'item'],
  additionalProperties: false,
};

export const HELD_RESPONSE: ResponseObject = {
  description:
    'not applied: held because an approval policy covers this request (the approval waits for its votes at ' +
    '`Location`; its requester executes it once approved), or, with `Change-Set`, staged in that change set',
  headers: {
    'X-Request-ID': { $ref: '#/components/headers/XRequestId' },
    Location: { description: 'the approval, or the change set', schema: { type: 'string' } },
  },
  content: {
    'application/json': {
      schema: {
        oneOf: [
          {
            type: 'object',
            description: 'held for approval',
            properties: { approval: { $ref: '#/components/schemas/Approval' } },
            required: ['approval'],
            additionalProperties: false,
          },
          STAGED,
        ],
      },
      example: { approval: APPROVAL_EXAMPLE },
    },
  },
};
