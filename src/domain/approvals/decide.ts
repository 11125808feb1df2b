import type { EntryRecord } from '../../engine/table.js';
import { decide, updatedAs } from '../decide.js';
import type { Operation } from '../policies/resource.js';
import { durationMs } from '../policies/resource.js';
import { DomainError, NotFound } from '../shared/errors.js';
import type { DomainEvent } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import { heldBy, mayApprove, type Subject, shown } from './policy.js';
import type { ApprovalState, HeldBy, Vote } from './resource.js';

type Values = Record<string, unknown>;

/** Who acts on an approval: a token's name and role (`none`: anonymous without a role). */
export interface Actor {
  actor: string;
  role: string;
  requestId: string;
}

/** A refusal of an approval step, with the events recorded before it is answered (expired, stale). */
export interface Step {
  events: DomainEvent[];
  refusal?: DomainError;
}

const refused = (status: number, code: string, detail: string) => new DomainError(status, code, detail);

/** The request a policy held, as ApprovalRequested: its target, diff, policies, sealed body, expiry. */
export function requested(
  state: ConfigState,
  ask: { operation: Operation; subjects: Subject[]; policies: Values[]; sealed: string; asker: Actor; at: string },
): DomainEvent {
  const [first] = ask.subjects;
  const single = ask.operation !== 'import' && first !== undefined;
  const ttl = Math.min(...ask.policies.map((policy) => durationMs(policy.ttl as string)));
  const fields = {
    operation: ask.operation,
    resource: single ? first.resource : null,
    target_id: single && first.before ? first.id : null,
    target_version: single && first.before ? (first.before.version as number) : null,
    requester: ask.asker.actor,
    request_id: ask.asker.requestId,
    policies: ask.policies.map(heldBy),
    changes: ask.subjects.map(shown),
    request: ask.sealed,
    state: 'pending',
    votes: [],
    reason: null,
    expires_at: new Date(Date.parse(ask.at) + ttl).toISOString(),
    executed_request_id: null,
  };
  return decide({ kind: 'create', resource: 'approvals', fields } as never, state)[0];
}

/** The approval, or a 404. */
export function approvalOf(state: ConfigState, id: number): EntryRecord {
  const entry = state.collections.approvals.get(id);
  if (!entry) throw new NotFound('approvals', id);
  return entry;
}

/** The approval's state as of `at`: a pending or approved one past its expiry is expired (until recorded). */
export function stateAt(approval: Values, at: string): ApprovalState {
  const state = approval.state as ApprovalState;
  if ((state === 'pending' || state === 'approved') && (approval.expires_at as string) <= at) return 'expired';
  return state;
}

/** One change of an approval, recorded as an event of the given type. */
const changed = (state: ConfigState, id: number, type: string, fields: Values): DomainEvent =>
  updatedAs(type, 'approvals', id, fields, state);

/** An approval found expired: ApprovalExpired recorded, then 410. */
function expired(state: ConfigState, approval: Values): Step {
  const reason = `its ${approval.expires_at} expiry passed before it was executed`;
  return {
    events: [changed(state, approval.id as number, 'ApprovalExpired', { state: 'expired', reason })],
    refusal: refused(410, 'expired', `approval ${approval.id} expired at ${approval.expires_at}`),
  };
}

/** Refuses a step on an approval that is no longer open; an expiry not yet recorded is recorded first. */
function open(state: ConfigState, approval: Values, at: string, allowed: readonly ApprovalState[]): Step | undefined {
  const now = stateAt(approval, at);
  if (now === 'expired' && approval.state !== 'expired') return expired(state, approval);
  if (now === 'expired') return { events: [], refusal: refused(410, 'expired', `approval ${approval.id} expired`) };
  if (allowed.includes(now)) return undefined;
  return { events: [], refusal: refused(409, 'not_open', `approval ${approval.id} is ${now}`) };
}

/** Whether every policy that held it has its number of approvals from its approvers. */
export function reached(policies: readonly HeldBy[], votes: readonly Vote[]): boolean {
  return policies.every(
    (policy) =>
      votes.filter((vote) => vote.vote === 'approve' && mayApprove(policy, vote.actor, vote.role)).length >=
      policy.approvals,
  );
}

/** A vote: never the requester's, one per token name, only by an approver of a policy that held it. */
export function voted(
  state: ConfigState,
  id: number,
  voter: Actor,
  vote: { vote: 'approve' | 'reject'; reason: string | null },
  at: string,
): Step {
  const approval = approvalOf(state, id);
  const closed = open(state, approval, at, ['pending']);
  if (closed) return closed;
  if (voter.role === 'none' || voter.actor === 'anonymous')
    return { events: [], refusal: refused(403, 'forbidden', 'a vote needs a token: its name is the voter') };
  if (voter.actor === approval.requester)
    return { events: [], refusal: refused(403, 'self_approval', 'the requester cannot vote on its own request') };
  const votes = approval.votes as Vote[];
  if (votes.some((one) => one.actor === voter.actor))
    return { events: [], refusal: refused(409, 'already_voted', `${voter.actor} has already voted on approval ${id}`) };
  const policies = approval.policies as HeldBy[];
  if (!policies.some((policy) => mayApprove(policy, voter.actor, voter.role))) {
    const names = policies.map((policy) => policy.name).join(', ');
    return { events: [], refusal: refused(403, 'not_an_approver', `${voter.actor} is no approver of ${names}`) };
  }
  const next = [...votes, { actor: voter.actor, role: voter.role, vote: vote.vote, reason: vote.reason, at }];
  if (vote.vote === 'reject') {
    const fields = { votes: next, state: 'rejected', reason: vote.reason };
    return { events: [changed(state, id, 'ApprovalRejected', fields)] };
  }
  const now = reached(policies, next) ? 'approved' : 'pending';
  return { events: [changed(state, id, 'ApprovalVoted', { votes: next, state: now })] };
}

/** The requester takes its request back while it is pending or approved. */
export function withdrawn(state: ConfigState, id: number, by: Actor, reason: string | null, at: string): Step {
  const approval = approvalOf(state, id);
  const closed = open(state, approval, at, ['pending', 'approved']);
  if (closed) return closed;
  if (by.actor !== approval.requester)
    return { events: [], refusal: refused(403, 'forbidden', `only ${approval.requester}, who asked, can withdraw it`) };
  return { events: [changed(state, id, 'ApprovalWithdrawn', { state: 'withdrawn', reason })] };
}

/**
 * The checks before an approved request runs: its requester, approved, not expired, its target at the
 * version it had (else stale, recorded, 412). Undefined: it may run, then `executed` records it.
 */
export function executable(state: ConfigState, id: number, by: Actor, operation: string, at: string): Step | undefined {
  const approval = approvalOf(state, id);
  if (by.actor !== approval.requester)
    return { events: [], refusal: refused(403, 'forbidden', `only ${approval.requester}, who asked, can execute it`) };
  if (approval.state === 'executed')
    return { events: [], refusal: refused(409, 'already_executed', `approval ${id} was already executed`) };
  const closed = open(state, approval, at, ['approved']);
  if (closed) return closed;
  if (approval.operation !== operation)
    throw new Error(`approval ${id} is for ${approval.operation}, not ${operation}`);
  if (approval.target_id === null) return undefined;
  const current = state.collections[approval.resource as 'servers'].get(approval.target_id as number);
  if (current?.version === approval.target_version) return undefined;
  const now = current ? `version ${current.version}` : 'deleted';
  const reason = `${approval.resource}/${approval.target_id} changed since the request (version ${approval.target_version}, now ${now})`;
  return {
    events: [changed(state, id, 'ApprovalStale', { state: 'stale', reason })],
    refusal: refused(412, 'stale', `${reason}: ask again`),
  };
}

/** The execution, recorded with the request that ran it. */
export const executed = (state: ConfigState, id: number, requestId: string): DomainEvent =>
  changed(state, id, 'ApprovalExecuted', { state: 'executed', executed_request_id: requestId });

/** Who asked for and who approved the request an approval executed: what an entry's history shows of it. */
export interface ApprovedBy {
  id: number;
  requester: string;
  approvers: string[];
}

/** The executed approvals by the request that executed them (each history item names its request). */
export function executedApprovals(state: ConfigState): Map<string, ApprovedBy> {
  const found = new Map<string, ApprovedBy>();
  for (const approval of state.collections.approvals.values()) {
    if (approval.executed_request_id === null) continue;
    const approvers = (approval.votes as Vote[]).filter((vote) => vote.vote === 'approve').map((vote) => vote.actor);
    const by = { id: approval.id, requester: approval.requester as string, approvers };
    found.set(approval.executed_request_id as string, by);
  }
  return found;
}
