import type { Context } from 'koa';
import type { ConfigService } from '../../application/service.js';
import { ifMatchAccepts } from '../../domain/shared/guards.js';
import type { Resource } from '../../domain/shared/types.js';
import type { AnyEntry } from '../../domain/state.js';
import { SCHEMAS } from '../../schemas/resources.js';
import type { WriteValidator } from '../../schemas/validator.js';
import { readJsonObject } from '../body.js';
import { listBody } from '../list-body.js';
import { present } from '../present.js';
import { parseId, parseQuery, refuseQuery } from '../request.js';
import { CONFIG_BASE, type RouteKind } from './descriptors.js';

export interface HandlerDeps {
  service: ConfigService;
  validator: WriteValidator;
}

type Handler = (ctx: Context, resource: Resource, deps: HandlerDeps) => Promise<void> | void;

const caller = (ctx: Context) => ({ actor: ctx.state.actor as string, requestId: ctx.state.requestId as string });
const etag = (entry: AnyEntry) => `"${entry.version}"`;
const ifMatch = (ctx: Context) => ctx.get('If-Match') || undefined;

function matchesFilters(resource: Resource, entry: AnyEntry, filters: Record<string, number | boolean>): boolean {
  const fields = entry as unknown as Record<string, unknown>;
  return Object.entries(filters).every(([name, value]) =>
    resource === 'servers' && name === 'tag'
      ? (fields.tags as number[]).includes(value as number)
      : fields[name] === value,
  );
}

function respondWithEntry(
  ctx: Context,
  resource: Resource,
  status: number,
  body: Record<string, unknown>,
  entry: AnyEntry,
): void {
  ctx.status = status;
  ctx.set('ETag', etag(entry));
  ctx.body = { ...body, item: present(resource, entry) };
}

/** Routes hold no business rule: parse, call the service, shape the answer. */
export const HANDLERS: Record<RouteKind, Handler> = {
  list(ctx, resource, { service }) {
    const query = parseQuery(ctx, SCHEMAS[resource].filters);
    const matching = service.list(resource).filter((entry) => matchesFilters(resource, entry, query.filters));
    const page = matching.slice(query.offset, query.limit === undefined ? undefined : query.offset + query.limit);
    ctx.type = 'application/json';
    ctx.body = listBody(resource, page, matching.length);
  },

  read(ctx, resource, { service }) {
    refuseQuery(ctx);
    const entry = service.get(resource, parseId(ctx.params.id));
    const tag = etag(entry);
    ctx.set('ETag', tag);
    const ifNoneMatch = ctx.get('If-None-Match');
    if (ifNoneMatch && ifMatchAccepts(ifNoneMatch, entry.version)) {
      ctx.status = 304;
      return;
    }
    ctx.body = { item: present(resource, entry) };
  },

  async create(ctx, resource, { service, validator }) {
    refuseQuery(ctx);
    const { id, fields } = validator.parse(resource, 'create', await readJsonObject(ctx));
    const result = await service.execute(resource, { type: 'create', id, fields }, caller(ctx));
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
    await service.execute(resource, { type: 'delete', id, ifMatch: ifMatch(ctx) }, caller(ctx));
    ctx.body = { id, resource, deleted: true, mode: resource === 'servers' ? 'soft' : 'hard' };
  },

  history(ctx, resource, { service }) {
    refuseQuery(ctx);
    ctx.body = { items: service.history(resource, parseId(ctx.params.id)) };
  },
};

async function change(
  ctx: Context,
  resource: Resource,
  { service, validator }: HandlerDeps,
  mode: 'replace' | 'patch',
) {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  const { fields, restore } = validator.parse(resource, mode, await readJsonObject(ctx), id);
  const request =
    mode === 'patch'
      ? { type: mode, id, fields, restore, ifMatch: ifMatch(ctx) }
      : { type: mode, id, fields, ifMatch: ifMatch(ctx) };
  const result = await service.execute(resource, request, caller(ctx));
  respondWithEntry(ctx, resource, 200, { id, resource, updated: true, changed: result.changed }, result.entry!);
}
