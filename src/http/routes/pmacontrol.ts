import type { Context } from 'koa';
import { ansibleInventory, type InventoryLists } from '../../application/ansible-inventory.js';
import type { ParseWrite } from '../../application/batch.js';
import type { DriftSelection } from '../../application/pmacontrol-drift.js';
import type { PmaControlProjection } from '../../application/pmacontrol-projection.js';
import type { PushOutcome } from '../../application/push.js';
import { readPush } from '../../application/push-request.js';
import type { ConfigService } from '../../application/service.js';
import type { ResourceName } from '../../domain/resources.js';
import { ValidationFailed } from '../../domain/shared/errors.js';
import type { WriteValidator } from '../../schemas/validator.js';
import { readJson } from '../body.js';
import { RequestError } from '../errors.js';
import { parseMoment } from '../moments.js';
import { refuseQuery, singleParameters } from '../request.js';
import { callerOf, jsonResponse, write } from '../writes.js';

/**
 * What PmaControl's own automation calls: its push (`pushServer`'s body and answer) and an Ansible
 * inventory. Routes hold no rule: read, ask, answer.
 */

/** A push of 10,000 servers is about 3 MB; this leaves room for ten times that. */
export const PUSH_LIMIT = 32 * 1024 * 1024;

/** PmaControl's answer: `authenticate`, the servers by outcome, the `haproxy` items taken but not kept, every problem. */
function pushAnswer(outcome: PushOutcome, proxies: { index: number; server: string }[]) {
  const { problems, ...mysql } = outcome;
  return JSON.stringify({ authenticate: true, mysql, haproxy: { ignored: proxies }, problems });
}

/** `POST /fr/api/pmacontrol/push` (writer): one append for the whole inventory; an Idempotency-Key is honoured. */
export async function push(ctx: Context, service: ConfigService, validator: WriteValidator): Promise<void> {
  refuseQuery(ctx);
  const { value, raw } = await readJson(ctx, PUSH_LIMIT);
  const request = readPush(value);
  const parse: ParseWrite = (resource, mode, body) => validator.parse(resource, mode, body).input;
  const caller = callerOf(ctx);
  await write(
    ctx,
    service,
    raw,
    {
      plain: () => service.write.push(request, parse, caller),
      once: (options) => service.write.push(request, parse, caller, options),
    },
    (outcome) => jsonResponse(200, pushAnswer(outcome, request.proxies)),
  );
}

const INVENTORIED: (keyof InventoryLists & ResourceName)[] = ['servers', 'clients', 'environments', 'tags'];

/** `GET /fr/api/inventory/ansible` (reader): Ansible's script inventory, now or `?at=` a moment. */
export async function inventory(ctx: Context, service: ConfigService): Promise<void> {
  const { at } = singleParameters(ctx, ['at']);
  const lists = {} as Record<keyof InventoryLists, InventoryLists[keyof InventoryLists]>;
  if (at === undefined) {
    for (const name of INVENTORIED) lists[name] = service.state.collections[name].inOrder();
  } else {
    const { position } = await service.changes.resolve(parseMoment('at', at));
    for (const name of INVENTORIED) lists[name] = (await service.changes.listAt(name, { position })).entries;
  }
  ctx.body = ansibleInventory(lists);
}

/**
 * `GET /fr/api/pmacontrol/status` (reader): where the projection into PmaControl's tables stands, as
 * this instance knows it; `enabled: false` when PMACONTROL_DB_URL is not set.
 */
export function projectionStatus(ctx: Context, service: ConfigService, projection?: PmaControlProjection): void {
  refuseQuery(ctx);
  ctx.body = projection?.status() ?? {
    enabled: false,
    applying: false,
    holder: null,
    position: 0,
    log_position: service.revision + 1,
    lag: 0,
    applied_at: null,
    last_error: null,
    last_error_at: null,
    drift: null,
    drift_checked_at: null,
  };
}

/** The projection, or a 404 saying that no PmaControl database is configured. */
function projectionOf(projection?: PmaControlProjection): PmaControlProjection {
  if (!projection) throw new RequestError(404, 'not_found', 'no PmaControl database is configured (PMACONTROL_DB_URL)');
  return projection;
}

/** `GET /fr/api/pmacontrol/drift` (reader): PmaControl's rows compared with the entries, now. */
export async function drift(ctx: Context, projection?: PmaControlProjection): Promise<void> {
  refuseQuery(ctx);
  ctx.body = (await projectionOf(projection).drift()).report;
}

/** `{"all": true}`, or `{"items": [{"table", "id", "column"}]}` naming differences of the drift. */
function selection(body: Record<string, unknown>): DriftSelection {
  const keys = Object.keys(body);
  if (body.all === true && keys.length === 1) return { all: true };
  const items = body.items;
  const valid =
    keys.length === 1 &&
    Array.isArray(items) &&
    items.length > 0 &&
    items.every(
      (item) =>
        item !== null &&
        typeof item === 'object' &&
        typeof item.table === 'string' &&
        Number.isSafeInteger(item.id) &&
        (item.column === null || typeof item.column === 'string'),
    );
  if (!valid) {
    throw new ValidationFailed([
      {
        field: 'items',
        code: 'invalid_value',
        message: 'send {"all": true} or {"items": [{"table", "id", "column"}, …]} as the drift lists them',
      },
    ]);
  }
  return { items: items as { table: string; id: number; column: string | null }[] };
}

/** `POST /fr/api/pmacontrol/drift/adopt` (admin): the chosen differences recorded as changes, actor `pmacontrol`. */
export async function adoptDrift(ctx: Context, projection?: PmaControlProjection): Promise<void> {
  refuseQuery(ctx);
  const chosen = selection((await readJson(ctx)).value);
  ctx.body = await projectionOf(projection).adopt(chosen, { actor: 'pmacontrol', requestId: ctx.state.requestId });
}

/** `POST /fr/api/pmacontrol/drift/overwrite` (admin): the chosen rows written again as the configuration has them. */
export async function overwriteDrift(ctx: Context, projection?: PmaControlProjection): Promise<void> {
  refuseQuery(ctx);
  const chosen = selection((await readJson(ctx)).value);
  ctx.body = await projectionOf(projection).overwrite(chosen);
}
