import type { Context } from 'koa';
import type { ConfigService } from '../application/service.js';
import { CHANGE_SET_STATES } from '../domain/change-sets/resource.js';
import { type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import {
  callerOf,
  invalidQuery,
  parseId,
  type RouteModule,
  readJson,
  refuseQuery,
  singleParameters,
} from '../http/route-module.js';
import { writesOf } from './bulk.js';
import type { Resolve } from './merge.js';
import { changeSetsOperations } from './operations.js';
import { close, diff, merge, open, presentChangeSet, revert, stageAll } from './run.js';
import { changeSetOf } from './staged.js';
import { changeSetView } from './view.js';

/** The change sets' routes (section 17): parse, ask run.ts, answer. */

export const API = '/fr/api/change-sets';

/** A body that is optional: `{}` when none was sent. */
async function bodyOf(ctx: Context): Promise<Record<string, unknown>> {
  return ctx.request.length ? (await readJson(ctx)).value : {};
}

function refuseUnknown(body: Record<string, unknown>, known: string[]): void {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => !known.includes(key))
    .map((field) => ({ field, code: 'unknown_field', message: `is not a field here (${known.join(', ')})` }));
  if (errors.length > 0) throw new ValidationFailed(errors);
}

/** `{"resolve": {"servers/42/id_environment": "change-set" | "main", …}}`, or nothing. */
function resolveOf(body: Record<string, unknown>): Resolve {
  refuseUnknown(body, ['resolve']);
  const resolve = body.resolve ?? {};
  const bad = (message: string) => new ValidationFailed([{ field: 'resolve', code: 'invalid_value', message }]);
  if (typeof resolve !== 'object' || resolve === null || Array.isArray(resolve)) throw bad('must be an object');
  for (const [key, side] of Object.entries(resolve)) {
    if (!/^[a-z-]+\/[1-9][0-9]*(\/[a-z_]+)?$/.test(key)) throw bad(`"${key}" is not resource/id or resource/id/field`);
    if (side !== 'change-set' && side !== 'main') throw bad(`"${key}": the side is change-set or main`);
  }
  return resolve as Resolve;
}

async function create(ctx: Context, service: ConfigService): Promise<void> {
  refuseQuery(ctx);
  const { value } = await readJson(ctx);
  refuseUnknown(value, ['name', 'description']);
  const { name, description = null } = value;
  const errors: FieldError[] = [];
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 200)
    errors.push({ field: 'name', code: 'invalid_value', message: 'a text of 1 to 200 characters' });
  if (description !== null && (typeof description !== 'string' || description.length > 2000))
    errors.push({ field: 'description', code: 'invalid_value', message: 'a text of at most 2000 characters' });
  if (errors.length > 0) throw new ValidationFailed(errors);
  const made = await open(service, callerOf(ctx), {
    name: (name as string).trim(),
    description: description as string | null,
  });
  ctx.status = 201;
  ctx.set('Location', `${API}/${made.change_set.id}`);
  ctx.body = made;
}

function list(ctx: Context, service: ConfigService): void {
  const { state } = singleParameters(ctx, ['state']);
  if (state !== undefined && !CHANGE_SET_STATES.includes(state as never))
    throw invalidQuery(`state must be one of ${CHANGE_SET_STATES.join(', ')}`);
  const items = service.state.collections['change-sets']
    .inOrder()
    .filter((entry) => state === undefined || entry.state === state)
    .map((entry) => presentChangeSet(service, entry));
  ctx.body = { items };
}

function get(ctx: Context, service: ConfigService): void {
  refuseQuery(ctx);
  ctx.body = { change_set: presentChangeSet(service, changeSetOf(service.state, parseId(ctx.params.id))) };
}

/** The writes staged, in order: which, on what (never their values). */
function staged(ctx: Context, service: ConfigService): void {
  refuseQuery(ctx);
  const id = changeSetOf(service.state, parseId(ctx.params.id)).id;
  const col = service.state.collections['change-set-operations'];
  const ids = [...col.referencing('change_set', id)].sort((a, b) => a - b);
  ctx.body = {
    items: ids.map((op) => {
      const entry = col.get(op)!;
      return { operation: op, kind: entry.kind, resource: entry.resource, id: entry.target_id, at: entry.created_at };
    }),
  };
}

async function stageMany(ctx: Context, service: ConfigService, parse: Parameters<typeof writesOf>[2]) {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  changeSetOf(service.state, id);
  const writes = await writesOf((await readJson(ctx)).value, service, parse);
  const results = await stageAll(service, id, writes, callerOf(ctx));
  ctx.status = 202;
  ctx.body = {
    change_set: presentChangeSet(service, changeSetOf(service.state, id)),
    staged: results.map(({ operation, resource, id: entry }) => ({ operation, resource, id: entry })),
  };
}

/** The route module; its view answers the configuration's reads sent with `Change-Set`. */
export function changeSetsRoutes(): RouteModule {
  const one = (path: string) => `${API}/{id}${path}`;
  return {
    tags: [
      { name: 'change-sets', description: 'Writes staged together, reviewed as one diff, merged and reverted as one' },
    ],
    routes: [
      { kind: 'create', method: 'POST', path: API, access: 'writer' },
      { kind: 'list', method: 'GET', path: API, access: 'reader' },
      { kind: 'get', method: 'GET', path: one(''), access: 'reader' },
      { kind: 'staged', method: 'GET', path: one('/operations'), access: 'reader' },
      { kind: 'stage', method: 'POST', path: one('/operations'), access: 'writer' },
      { kind: 'diff', method: 'GET', path: one('/diff'), access: 'reader' },
      { kind: 'merge', method: 'POST', path: one('/merge'), access: 'writer' },
      { kind: 'revert', method: 'POST', path: one('/revert'), access: 'writer' },
      { kind: 'close', method: 'POST', path: one('/close'), access: 'writer' },
    ],
    operations: changeSetsOperations,
    handlers: ({ service, parse }) => ({
      create: (ctx) => create(ctx, service),
      list: (ctx) => list(ctx, service),
      get: (ctx) => get(ctx, service),
      staged: (ctx) => staged(ctx, service),
      stage: (ctx) => stageMany(ctx, service, parse),
      diff: async (ctx) => {
        refuseQuery(ctx);
        ctx.body = await diff(service, parseId(ctx.params.id));
      },
      merge: async (ctx) => {
        refuseQuery(ctx);
        ctx.body = await merge(service, parseId(ctx.params.id), resolveOf(await bodyOf(ctx)), callerOf(ctx));
      },
      revert: async (ctx) => {
        refuseQuery(ctx);
        ctx.body = await revert(service, parseId(ctx.params.id), resolveOf(await bodyOf(ctx)), callerOf(ctx));
      },
      close: async (ctx) => {
        refuseQuery(ctx);
        ctx.body = await close(service, parseId(ctx.params.id), callerOf(ctx));
      },
    }),
    view: ({ service }) => changeSetView(service),
  };
}
