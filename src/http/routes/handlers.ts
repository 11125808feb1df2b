import type { Context } from 'koa';
import { selectEntries } from '../../application/queries.js';
import type { ConfigService } from '../../application/service.js';
import { type ResourceName, resourceOf } from '../../domain/resources.js';
import type { EntryRecord } from '../../domain/shared/collection.js';
import { type FieldError, ValidationFailed } from '../../domain/shared/errors.js';
import type { WriteValidator } from '../../schemas/validator.js';
import { readJsonObject } from '../body.js';
import { entryJson, listBody } from '../list-body.js';
import { expectedVersion, parseId, parseListQuery, parseReadQuery, refuseQuery } from '../request.js';
import { CONFIG_BASE, type RouteKind } from './descriptors.js';

export interface HandlerDeps {
  service: ConfigService;
  validator: WriteValidator;
}

type Handler = <R extends ResourceName>(ctx: Context, resource: R, deps: HandlerDeps) => Promise<void> | void;

const caller = (ctx: Context) => ({ actor: ctx.state.actor as string, requestId: ctx.state.requestId as string });
const etag = (entry: EntryRecord) => `"${entry.version}"`;
const expected = (ctx: Context) => expectedVersion(ctx.get('If-Match'));

/** A JSON body: fixed members, the entry's cached JSON, then members after it. */
function respondWithEntry(
  ctx: Context,
  resource: ResourceName,
  status: number,
  head: object,
  entry: EntryRecord,
  tail: object = {},
) {
  ctx.status = status;
  ctx.set('ETag', etag(entry));
  ctx.type = 'application/json';
  const before = Object.keys(head).length ? `${JSON.stringify(head).slice(1, -1)},` : '';
  const after = Object.keys(tail).length ? `,${JSON.stringify(tail).slice(1, -1)}` : '';
  ctx.body = `{${before}"item":${entryJson(resource, entry)}${after}}`;
}

/** Routes hold no business rule: parse, call the service, shape the answer. */
export const HANDLERS: Record<RouteKind, Handler> = {
  list(ctx, resource, { service }) {
    const { query, at } = parseListQuery(ctx, resourceOf(resource));
    const then = at && service.audit.listAt(resource, at);
    const all = then ? then.entries : service.state.collections[resource].inOrder();
    const { items, total } = selectEntries(all, query);
    ctx.type = 'application/json';
    ctx.body = listBody(resource, items, total, then ? { as_of: then.asOf } : {});
  },

  read(ctx, resource, { service }) {
    const at = parseReadQuery(ctx);
    const id = parseId(ctx.params.id);
    if (at) {
      const then = service.audit.entryAt(resource, id, at);
      respondWithEntry(ctx, resource, 200, {}, then.entry, { as_of: then.asOf });
      return;
    }
    const entry = service.get(resource, id);
    ctx.set('ETag', etag(entry));
    const tags = ctx
      .get('If-None-Match')
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''));
    if (tags.includes('*') || tags.includes(etag(entry))) {
      ctx.status = 304;
      return;
    }
    respondWithEntry(ctx, resource, 200, {}, entry);
  },

  async create(ctx, resource, { service, validator }) {
    refuseQuery(ctx);
    const { id, input } = validator.parse(resource, 'create', await readJsonObject(ctx));
    const result = await service.execute({ kind: 'create', resource, id, input }, caller(ctx));
    ctx.set('Location', `${CONFIG_BASE}/${resource}/${result.id}`);
    respondWithEntry(ctx, resource, 201, { id: result.id, resource }, result.entry!);
  },

  async replace(ctx, resource, deps) {
    await change(ctx, resource, deps, 'replace');
  },

  async patch(ctx, resource, deps) {
    await change(ctx, resource, deps, 'patch');
  },

  async delete(ctx, resource, { service }) {
    refuseQuery(ctx);
    const id = parseId(ctx.params.id);
    await service.execute({ kind: 'delete', resource, id, expected: expected(ctx) }, caller(ctx));
    ctx.body = { id, resource, deleted: true, mode: resourceOf(resource).declaration.deletion };
  },

  history(ctx, resource, { service }) {
    refuseQuery(ctx);
    ctx.body = { items: service.history(resource, parseId(ctx.params.id)) };
  },

  async revert(ctx, resource, { service }) {
    refuseQuery(ctx);
    const id = parseId(ctx.params.id);
    const toVersion = parseRevertBody(await readJsonObject(ctx));
    const result = await service.execute(
      { kind: 'revert', resource, id, toVersion, expected: expected(ctx) },
      caller(ctx),
    );
    respondWithEntry(ctx, resource, 200, { id, resource, reverted_to: toVersion }, result.entry!);
  },
};

/** `{"version": n}`, nothing else. */
function parseRevertBody(body: Record<string, unknown>): number {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => key !== 'version')
    .map((field) => ({ field, code: 'unknown_field', message: 'is not a field of a revert' }));
  const version = body.version;
  if (!Number.isSafeInteger(version) || (version as number) < 1) {
    errors.unshift({ field: 'version', code: 'invalid_type', message: 'must be a version number, an integer from 1' });
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return version as number;
}

async function change<R extends ResourceName>(
  ctx: Context,
  resource: R,
  { service, validator }: HandlerDeps,
  kind: 'replace' | 'patch',
) {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  const { input, restore } = validator.parse(resource, kind, await readJsonObject(ctx), id);
  const result = await service.execute({ kind, resource, id, input, expected: expected(ctx), restore }, caller(ctx));
  respondWithEntry(ctx, resource, 200, { id, resource, updated: true, changed: result.changed }, result.entry!);
}
