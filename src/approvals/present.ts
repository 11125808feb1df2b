import { stateAt } from '../domain/approvals/decide.js';
import type { EntryRecord } from '../engine/table.js';

/**
 * An approval as the API shows it: never its sealed request; its state as of `now` (a pending or
 * approved one past its expiry is `expired`, whether or not that was recorded yet).
 */
export function presentApproval(approval: EntryRecord, now: string) {
  return {
    id: approval.id,
    state: stateAt(approval, now),
    operation: approval.operation,
    target:
      approval.resource === null
        ? null
        : { resource: approval.resource, id: approval.target_id, version: approval.target_version },
    requester: approval.requester,
    request_id: approval.request_id,
    changes: approval.changes,
    policies: approval.policies,
    votes: approval.votes,
    reason: approval.reason,
    expires_at: approval.expires_at,
    executed_request_id: approval.executed_request_id,
    created_at: approval.created_at,
    updated_at: approval.updated_at,
    version: approval.version,
  };
}

export type PresentedApproval = ReturnType<typeof presentApproval>;
