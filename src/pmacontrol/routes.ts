import type { Context } from 'koa';
import type { ConfigService, ParseWrite } from '../application/service.js';
import type { DecidedBatch } from '../application/writes.js';
import type { ResourceName } from '../domain/resources.js';
import { ValidationFailed } from '../domain/shared/errors.js';
import {
  callerOf,
  jsonResponse,
  parseMoment,
  RequestError,
  type RouteModule,
  readJson,
  readJsonBounded,
  refuseQuery,
  singleParameters,
  write,
} from '../http/route-module.js';
import { ansibleInventory, type InventoryLists } from './ansible-inventory.js';
import type { DriftSelection } from './drift.js';
import {
  adoptDrift as adoptOperation,
  overwriteDrift as overwriteOperation,
  pmacontrolDrift,
} from './drift-operations.js';
import { ansibleInventory as inventoryOperation, pmacontrolStatus } from './operations.js';
import type { PmaControlProjection } from './projection.js';
import { PushDecider, type PushedItem, type PushOutcome } from './push.js';
import { push as pushOperation } from './push-operations.js';
import { PUSH_BOUNDS, type PushRequest, readPush } from './push-request.js';

/**
 * What PmaControl's own automation calls: its push (`pushServer`'s body and answer) and an Ansible
 * inventory. Routes hold no rule: read, ask, answer.
 */

/**
 * PmaControl's answer (`authenticate`, `mysql.inserted`/`updated`/`failed` as its strings, `error`),
 * and this service's detail under `details`: each item's place and id, the unchanged, the `haproxy`
 * items taken but not kept, every problem.
 */
function pushAnswer(outcome: PushOutcome, proxies: { index: number; server: string }[]) {
  const { problems, inserted, updated, unchanged, failed } = outcome;
  const plain = (items: PushedItem[]) => items.map(({ display: _, ...item }) => item);
  const why = (item: PushedItem) =>
    problems.filter((p) => p.field === `mysql[${item.index}]` || p.field.startsWith(`mysql[${item.index}].`));
  return JSON.stringify({
    authenticate: 'ok',
    mysql: {
      inserted: inserted.map((item) => item.display),
      updated: updated.map((item) => item.display),
      failed: failed.map(
        (item) =>
          `${item.server}: ${why(item)
            .map((p) => p.message)
            .join('; ')}`,
      ),
    },
    error: problems.map((p) => `${p.field}: ${p.message}`),
    details: {
      inserted: plain(inserted),
      updated: plain(updated),
      unchanged: plain(unchanged),
      failed: plain(failed),
      haproxy: { ignored: proxies },
      problems,
    },
  });
}

/**
 * Every server of a push decided in one batch (push.ts), each with what it names standing or falling
 * alone, and one append for all; the same inventory again records nothing.
 */
const decidePush = (request: PushRequest, parse: ParseWrite) => (batch: DecidedBatch) =>
  new PushDecider(batch, parse, request).decide(request.servers);

/** `POST /fr/api/pmacontrol/push` (writer): one append for the whole inventory; an Idempotency-Key is honoured. */
async function push(ctx: Context, service: ConfigService, parse: ParseWrite): Promise<void> {
  refuseQuery(ctx);
  const { value, raw } = await readJsonBounded(ctx, PUSH_BOUNDS);
  const request = readPush(value);
  const caller = callerOf(ctx);
  const build = decidePush(request, parse);
  await write(
    ctx,
    service,
    raw,
    {
      plain: () => service.write.batch(build, caller),
      once: (options) => service.write.batch(build, caller, options),
    },
    (outcome: PushOutcome) => jsonResponse(200, pushAnswer(outcome, request.proxies)),
  );
}

const INVENTORIED: (keyof InventoryLists & ResourceName)[] = ['servers', 'clients', 'environments', 'tags'];

/** `GET /fr/api/inventory/ansible` (reader): Ansible's script inventory, now or `?at=` a moment. */
async function inventory(ctx: Context, service: ConfigService): Promise<void> {
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
function projectionStatus(ctx: Context, service: ConfigService, projection?: PmaControlProjection): void {
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
    blocked: null,
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
async function drift(ctx: Context, projection?: PmaControlProjection): Promise<void> {
  refuseQuery(ctx);
  ctx.body = (await projectionOf(projection).drift.drift()).report;
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
async function adoptDrift(ctx: Context, projection?: PmaControlProjection): Promise<void> {
  refuseQuery(ctx);
  const chosen = selection((await readJson(ctx)).value);
  ctx.body = await projectionOf(projection).drift.adopt(chosen, {
    actor: 'pmacontrol',
    requestId: ctx.state.requestId,
  });
}

/** `POST /fr/api/pmacontrol/drift/overwrite` (admin): the chosen rows written again as the configuration has them. */
async function overwriteDrift(ctx: Context, projection?: PmaControlProjection): Promise<void> {
  refuseQuery(ctx);
  const chosen = selection((await readJson(ctx)).value);
  ctx.body = await projectionOf(projection).drift.overwrite(chosen);
}

const API = '/fr/api';

/** PmaControl's routes: its push, the Ansible inventory, the projection's status and drift. */
export function pmacontrolRoutes(projection?: PmaControlProjection): RouteModule {
  return {
    tags: [
      { name: 'pmacontrol', description: "What PmaControl's own automation calls: its push, and an Ansible inventory" },
    ],
    routes: [
      {
        kind: 'push',
        method: 'POST',
        path: `${API}/pmacontrol/push`,
        access: 'writer',
        basic: true,
        ...(projection ? { otherCredentials: (user, password) => projection.webserviceUser(user, password) } : {}),
      },
      { kind: 'inventory', method: 'GET', path: `${API}/inventory/ansible`, access: 'reader' },
      { kind: 'status', method: 'GET', path: `${API}/pmacontrol/status`, access: 'reader' },
      { kind: 'drift', method: 'GET', path: `${API}/pmacontrol/drift`, access: 'reader' },
      { kind: 'adopt', method: 'POST', path: `${API}/pmacontrol/drift/adopt`, access: 'admin' },
      { kind: 'overwrite', method: 'POST', path: `${API}/pmacontrol/drift/overwrite`, access: 'admin' },
    ],
    operations: {
      push: pushOperation,
      inventory: inventoryOperation,
      status: pmacontrolStatus,
      drift: pmacontrolDrift,
      adopt: adoptOperation,
      overwrite: overwriteOperation,
    },
    handlers: ({ service, parse }) => ({
      push: (ctx) => push(ctx, service, parse),
      inventory: (ctx) => inventory(ctx, service),
      status: (ctx) => projectionStatus(ctx, service, projection),
      drift: (ctx) => drift(ctx, projection),
      adopt: (ctx) => adoptDrift(ctx, projection),
      overwrite: (ctx) => overwriteDrift(ctx, projection),
    }),
  };
}
