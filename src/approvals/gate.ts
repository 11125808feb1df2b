import type { Caller } from '../application/service.js';
import type { WriteGate } from '../application/writes.js';
import { type Actor, executable, executed, requested } from '../domain/approvals/decide.js';
import { anyNames, catching, subjectsOf } from '../domain/approvals/policy.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { EntryRecord } from '../engine/table.js';
import { presentApproval } from './present.js';

/** Who asks, as the approval rules read it. */
export const actorOf = (caller: Caller): Actor => ({
  actor: caller.actor,
  role: caller.role ?? 'none',
  requestId: caller.requestId,
});

/**
 * The policies' say on every gated write (section 16), one step of the write path decided on the same
 * state as the write and recorded in the same append:
 * - executing an approval (`caller.approval`): the approval is checked (its requester, approved, not
 *   expired, its target unchanged), then the write runs and ApprovalExecuted is recorded with it;
 * - a write no enabled policy holds runs as it is;
 * - a write a policy holds is recorded as ApprovalRequested instead (its request sealed), and
 *   answered 202 — unless a break-glass token passes it with a reason: it runs, with BreakGlassUsed.
 */
export function approvalGate(now: () => Date): WriteGate {
  return {
    decide({ operation, request, caller, state, write, seal }) {
      if (caller.approval !== undefined) {
        const step = executable(state, caller.approval, actorOf(caller), operation, now().toISOString());
        if (step) return step;
        return { events: [...write(), executed(state, caller.approval, caller.requestId)] };
      }
      if (!anyNames(state, operation)) return undefined;
      const events = write();
      const subjects = subjectsOf(events, state);
      const policies = catching(state, operation, subjects);
      if (policies.length === 0) return { events };
      if (caller.breakGlass !== undefined) {
        const [first] = subjects;
        const data = {
          resource: first.resource,
          id: first.id,
          operation,
          reason: caller.breakGlass,
          policies: policies.map((policy) => policy.name),
        };
        const used: DomainEvent = { type: 'BreakGlassUsed', data };
        return { events: [...events, used] };
      }
      const at = now().toISOString();
      const sealed = seal(JSON.stringify(request));
      const event = requested(state, { operation, subjects, policies, sealed, asker: actorOf(caller), at });
      const id = event.data.id as number;
      return { events: [event], answer: (after) => heldResponse(after.collections.approvals.get(id)!, at) };
    },
  };
}

/** The answer to a held request: 202 with the approval. */
function heldResponse(approval: EntryRecord, at: string) {
  return {
    status: 202,
    headers: { Location: `/fr/api/approvals/${approval.id}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ approval: presentApproval(approval, at) }),
  };
}
