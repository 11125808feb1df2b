import type { Context } from 'koa';
import type { ConfigService } from '../application/service.js';
import { fieldError } from '../domain/shared/errors.js';
import {
  invalidQuery,
  parseId,
  RequestError,
  type RouteModule,
  readJson,
  refuseQuery,
  singleParameters,
} from '../http/route-module.js';
import { DELIVERY_STATES, type DeliveryLedger, type DeliveryState } from './ledger.js';
import { deliveries, redeliver, replay, status } from './operations.js';

/**
 * The operator's side of event rules (section 15): a rule's deliveries, a redelivery, a replay from a
 * position, its status. The rules themselves are entries (`/fr/api/event-rules`, the core's entry
 * routes, admins only). Routes hold no rule: parse, ask the ledger, answer.
 */

export const API = '/fr/api/event-rules';

function ledgerOf(ledger: DeliveryLedger | undefined): DeliveryLedger {
  if (!ledger) throw new RequestError(503, 'unavailable', 'this instance delivers no event rules');
  return ledger;
}

/** The rule of the path, which must exist. */
function ruleId(ctx: Context, service: ConfigService): number {
  const id = parseId(ctx.params.id);
  if (!service.state.collections['event-rules'].get(id))
    throw new RequestError(404, 'not_found', `event rule ${id} does not exist`);
  return id;
}

const LIMIT = /^[1-9][0-9]{0,3}$/;

export async function listDeliveries(ctx: Context, service: ConfigService, ledger?: DeliveryLedger): Promise<void> {
  const params = singleParameters(ctx, ['state', 'after', 'limit']);
  const id = ruleId(ctx, service);
  const state = params.state as DeliveryState | undefined;
  if (state !== undefined && !DELIVERY_STATES.includes(state))
    throw invalidQuery(`state must be one of ${DELIVERY_STATES.join(', ')}`);
  if (params.limit !== undefined && (!LIMIT.test(params.limit) || Number(params.limit) > 1000))
    throw invalidQuery('limit must be from 1 to 1000');
  if (params.after !== undefined && !/^(0|[1-9][0-9]{0,15})$/.test(params.after))
    throw invalidQuery('after must be a position (an integer from 0)');
  const limit = Number(params.limit ?? 100);
  const after = Number(params.after ?? 0);
  const items = await ledgerOf(ledger).deliveries(id, state, after, limit + 1);
  const more = items.length > limit;
  if (more) items.pop();
  const next = new URLSearchParams({ ...params, after: String(items[items.length - 1]?.position ?? after) });
  ctx.body = { items, next: more ? `${API}/${id}/deliveries?${next}` : null };
}

export async function askRedelivery(ctx: Context, service: ConfigService, ledger?: DeliveryLedger): Promise<void> {
  refuseQuery(ctx);
  const id = ruleId(ctx, service);
  const position = parseId(ctx.params.position);
  if (position > service.revision + 1) throw new RequestError(404, 'not_found', `there is no change at ${position}`);
  await ledgerOf(ledger).redeliver(id, position, service.now());
  ctx.status = 202;
  ctx.body = { rule: id, position, state: 'pending' };
}

export async function askReplay(ctx: Context, service: ConfigService, ledger?: DeliveryLedger): Promise<void> {
  refuseQuery(ctx);
  const id = ruleId(ctx, service);
  const { value } = await readJson(ctx);
  const from = (value as { from?: unknown }).from;
  const unknown = Object.keys(value).filter((key) => key !== 'from');
  if (unknown.length > 0) throw fieldError(unknown[0], 'unknown_field', 'is not a field of a replay (only from)');
  if (!Number.isSafeInteger(from) || (from as number) < 1)
    throw fieldError('from', 'invalid_value', 'must be a position of the log, an integer from 1');
  if ((from as number) > service.revision + 2)
    throw fieldError(
      'from',
      'invalid_value',
      `the log ends at ${service.revision + 1}: a replay starts at or before its end`,
    );
  await ledgerOf(ledger).rewind(id, (from as number) - 1);
  ctx.status = 202;
  ctx.body = { rule: id, from, cursor: (from as number) - 1 };
}

export async function ruleStatus(
  ctx: Context,
  service: ConfigService,
  ledger?: DeliveryLedger,
  holder?: string,
): Promise<void> {
  refuseQuery(ctx);
  const id = ruleId(ctx, service);
  const rule = service.state.collections['event-rules'].get(id)!;
  const known = ledgerOf(ledger);
  const [progress, delivering] = await Promise.all([known.progress(id), known.holder()]);
  const head = service.revision + 1;
  const cursor = progress?.cursor ?? null;
  ctx.body = {
    rule: id,
    name: rule.name,
    enabled: rule.enabled,
    cursor,
    head,
    lag: cursor === null ? null : Math.max(0, head - cursor),
    last_error: progress?.last_error ?? null,
    last_error_at: progress?.last_error_at ?? null,
    delivering: delivering ?? null,
    this_instance: holder !== undefined && delivering === holder,
  };
}

/** The route module; `live`: the instance's ledger and deliverer's name (absent in `openapi`). */
export function eventRulesRoutes(live: { ledger?: DeliveryLedger; holder?: string } = {}): RouteModule {
  const { ledger, holder } = live;
  return {
    tags: [{ name: 'event-rules-delivery', description: 'Deliveries of the event rules: state, redelivery, replay' }],
    routes: [
      { kind: 'deliveries', method: 'GET', path: `${API}/{id}/deliveries`, access: 'admin' },
      { kind: 'redeliver', method: 'POST', path: `${API}/{id}/deliveries/{position}/redeliver`, access: 'admin' },
      { kind: 'replay', method: 'POST', path: `${API}/{id}/replay`, access: 'admin' },
      { kind: 'status', method: 'GET', path: `${API}/{id}/status`, access: 'admin' },
    ],
    operations: { deliveries, redeliver, replay, status },
    handlers: ({ service }) => ({
      deliveries: (ctx) => listDeliveries(ctx, service, ledger),
      redeliver: (ctx) => askRedelivery(ctx, service, ledger),
      replay: (ctx) => askReplay(ctx, service, ledger),
      status: (ctx) => ruleStatus(ctx, service, ledger, holder),
    }),
  };
}
