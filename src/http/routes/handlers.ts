import type { Context } from 'koa';
import { selectEntries } from '../../application/queries.js';
import { type ResourceName, resourceOf } from '../../domain/resources.js';
import { entryBody, entryRead, etag } from '../entry-read.js';
import { listBody, plainList } from '../list-body.js';
import { parseId, parseListQuery, parseReadQuery, refuseQuery } from '../request.js';
import { change, create, remove, revert } from './config-writes.js';
import type { HandlerDeps, RouteKind } from './descriptors.js';

type Handler = <R extends ResourceName>(ctx: Context, resource: R, deps: HandlerDeps) => Promise<void> | void;

/** Routes hold no business rule: parse, call the service, shape the answer. */
export const HANDLERS: Record<RouteKind, Handler> = {
  async list(ctx, resource, { service }) {
    const { query, at } = parseListQuery(ctx, resourceOf(resource));
    ctx.type = 'application/json';
    if (ctx.querystring === '') {
      const { body, length } = plainList(resource, service.state.collections[resource]);
      ctx.body = body;
      if (length !== undefined) ctx.length = length;
      return;
    }
    const then = at && (await service.changes.listAt(resource, at));
    const all = then ? then.entries : service.state.collections[resource].inOrder();
    const { items, total } = selectEntries(all, query);
    ctx.body = listBody(resource, items, total, then ? { as_of: then.asOf } : {});
  },

  async read(ctx, resource, { service }) {
    const at = parseReadQuery(ctx);
    const id = parseId(ctx.params.id);
    if (at) {
      const then = await service.readFresh(() => service.changes.entryAt(resource, id, at));
      ctx.set('ETag', etag(then.entry));
      ctx.type = 'application/json';
      ctx.body = entryBody(resource, {}, then.entry, { as_of: then.asOf });
      return;
    }
    const entry = await service.readFresh(() => service.get(resource, id));
    ctx.set('ETag', etag(entry));
    const tags = ctx
      .get('If-None-Match')
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''));
    if (tags.includes('*') || tags.includes(etag(entry))) {
      ctx.status = 304;
      return;
    }
    const { headers, body } = entryRead(resource, entry);
    for (const [name, value] of headers) ctx.set(name, value);
    ctx.body = body;
  },

  create,
  replace: (ctx, resource, deps) => change(ctx, resource, deps, 'replace'),
  patch: (ctx, resource, deps) => change(ctx, resource, deps, 'patch'),
  delete: remove,
  revert,

  async history(ctx, resource, { service }) {
    refuseQuery(ctx);
    const id = parseId(ctx.params.id);
    ctx.body = { items: await service.readFresh(() => service.history(resource, id)) };
  },
};
