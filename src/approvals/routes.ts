import type { Context } from 'koa';
import type { ConfigService } from '../application/service.js';
import { approvalOf, stateAt, voted, withdrawn } from '../domain/approvals/decide.js';
import { mayApprove } from '../domain/approvals/policy.js';
import { APPROVAL_STATES, type HeldBy, type Vote } from '../domain/approvals/resource.js';
import { type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { EntryRecord } from '../engine/table.js';
import {
  callerOf,
  invalidQuery,
  parseId,
  type RouteModule,
  readJson,
  refuseQuery,
  singleParameters,
} from '../http/route-module.js';
import { executeApproval } from './execute.js';
import { actorOf } from './gate.js';
import { approvalsOperations } from './operations.js';
import { presentApproval } from './present.js';

/**
 * The approvals' routes (section 16): list and read them, vote, withdraw, execute. Routes hold no
 * rule: parse, ask the rules (src/domain/approvals/), answer.
 */

export const API = '/fr/api/approvals';

const now = (service: ConfigService) => service.now().toISOString();

/** `{"reason": "…"}`, nothing else; required when rejecting. */
async function reasonOf(ctx: Context, required: boolean): Promise<string | null> {
  const { value } = ctx.request.length ? await readJson(ctx) : { value: {} as Record<string, unknown> };
  const errors: FieldError[] = Object.keys(value)
    .filter((key) => key !== 'reason')
    .map((field) => ({ field, code: 'unknown_field', message: 'is not a field of a vote (only reason)' }));
  const reason = value.reason;
  if (reason !== undefined && (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > 1000))
    errors.push({ field: 'reason', code: 'invalid_value', message: 'must be a text of 1 to 1000 characters' });
  else if (required && reason === undefined)
    errors.push({ field: 'reason', code: 'required', message: 'a rejection says why' });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return typeof reason === 'string' ? reason.trim() : null;
}

const LIMIT = /^[1-9][0-9]{0,3}$/;

/** Whether `actor` (of `role`) may still vote on it: a token, not its requester, not voted yet, an approver. */
function awaits(approval: EntryRecord, actor: string, role: string): boolean {
  if (
    actor === 'anonymous' ||
    approval.requester === actor ||
    (approval.votes as Vote[]).some((vote) => vote.actor === actor)
  )
    return false;
  return (approval.policies as HeldBy[]).some((policy) => mayApprove(policy, actor, role));
}

export function listApprovals(ctx: Context, service: ConfigService): void {
  const params = singleParameters(ctx, ['state', 'requester', 'approver', 'after', 'limit']);
  if (params.state !== undefined && !APPROVAL_STATES.includes(params.state as never))
    throw invalidQuery(`state must be one of ${APPROVAL_STATES.join(', ')}`);
  if (params.approver !== undefined && params.approver !== 'me') throw invalidQuery('approver can only be "me"');
  if (params.limit !== undefined && (!LIMIT.test(params.limit) || Number(params.limit) > 1000))
    throw invalidQuery('limit must be from 1 to 1000');
  if (params.after !== undefined && !/^(0|[1-9][0-9]{0,15})$/.test(params.after))
    throw invalidQuery('after must be an approval id (an integer from 0)');
  const limit = Number(params.limit ?? 100);
  const after = Number(params.after ?? 0);
  const at = now(service);
  const { actor, role } = actorOf(callerOf(ctx));
  const items = [];
  for (const approval of service.state.collections.approvals.inOrder()) {
    if (approval.id <= after) continue;
    const state = stateAt(approval, at);
    if (params.state !== undefined && state !== params.state) continue;
    if (params.requester !== undefined && approval.requester !== params.requester) continue;
    if (params.approver === 'me' && (state !== 'pending' || !awaits(approval, actor, role))) continue;
    items.push(presentApproval(approval, at));
    if (items.length > limit) break;
  }
  const more = items.length > limit;
  if (more) items.pop();
  const next = new URLSearchParams({ ...params, after: String(items[items.length - 1]?.id ?? after) });
  ctx.body = { items, next: more ? `${API}?${next}` : null };
}

export function getApproval(ctx: Context, service: ConfigService): void {
  refuseQuery(ctx);
  const approval = approvalOf(service.state, parseId(ctx.params.id));
  ctx.body = { approval: presentApproval(approval, now(service)) };
}

/** Records a step (a vote, a withdrawal) and answers the approval as it left it. */
async function step(ctx: Context, service: ConfigService, kind: 'approve' | 'reject' | 'withdraw'): Promise<void> {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  const reason = await reasonOf(ctx, kind === 'reject');
  const caller = callerOf(ctx);
  const who = actorOf(caller);
  const at = now(service);
  ctx.body = await service.write.record(
    caller,
    (state) =>
      kind === 'withdraw' ? withdrawn(state, id, who, reason, at) : voted(state, id, who, { vote: kind, reason }, at),
    (state) => ({ approval: presentApproval(state.collections.approvals.get(id)!, at) }),
  );
}

export async function execute(ctx: Context, service: ConfigService): Promise<void> {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  if (ctx.request.length) await reasonOf(ctx, false);
  ctx.body = await executeApproval(service, id, callerOf(ctx));
}

/** The route module. */
export function approvalsRoutes(): RouteModule {
  return {
    tags: [{ name: 'approvals', description: 'Requests held by a policy until other people approve them (four eyes)' }],
    routes: [
      { kind: 'list', method: 'GET', path: API, access: 'reader' },
      { kind: 'get', method: 'GET', path: `${API}/{id}`, access: 'reader' },
      { kind: 'approve', method: 'POST', path: `${API}/{id}/approve`, access: 'reader' },
      { kind: 'reject', method: 'POST', path: `${API}/{id}/reject`, access: 'reader' },
      { kind: 'withdraw', method: 'POST', path: `${API}/{id}/withdraw`, access: 'reader' },
      { kind: 'execute', method: 'POST', path: `${API}/{id}/execute`, access: 'reader' },
    ],
    operations: approvalsOperations,
    handlers: ({ service }) => ({
      list: (ctx) => listApprovals(ctx, service),
      get: (ctx) => getApproval(ctx, service),
      approve: (ctx) => step(ctx, service, 'approve'),
      reject: (ctx) => step(ctx, service, 'reject'),
      withdraw: (ctx) => step(ctx, service, 'withdraw'),
      execute: (ctx) => execute(ctx, service),
    }),
  };
}
