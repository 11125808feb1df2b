import type { Context } from 'koa';
import { selectEntries } from '../../application/queries.js';
import { type ApprovedBy, executedApprovals } from '../../domain/approvals/decide.js';
import { type ResourceName, resourceOf } from '../../domain/resources.js';
import { NotFound } from '../../domain/shared/errors.js';
import { entryBody, entryRead, etag } from '../entry-read.js';
import { invalidQuery } from '../errors.js';
import { listBody, plainList } from '../list-body.js';
import { parseId, parseListQuery, parseReadQuery, refuseQuery } from '../request.js';
import { change, create, remove, revert } from './config-writes.js';
import type { HandlerDeps, RouteKind } from './descriptors.js';

type Handler = <R extends ResourceName>(ctx: Context, resource: R, deps: HandlerDeps) => Promise<void> | void;

/** Routes hold no business rule: parse, call the service, shape the answer. */
export const HANDLERS: Record<RouteKind, Handler> = {
  async list(ctx, resource, { service, viewOf }) {
    const { query, at } = parseListQuery(ctx, resourceOf(resource));
    ctx.type = 'application/json';
    const view = viewOf?.(ctx);
    if (view) {
      if (at) throw invalidQuery('a change set is read as it would leave the configuration now: no at');
      const { items, total } = selectEntries(view.entries(resource), query);
      ctx.body = listBody(resource, items, total);
      return;
    }
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

  async read(ctx, resource, { service, viewOf }) {
    const at = parseReadQuery(ctx);
    const id = parseId(ctx.params.id);
    const view = viewOf?.(ctx);
    if (view) {
      if (at) throw invalidQuery('a change set is read as it would leave the configuration now: no at');
      const entry = view.get(resource, id);
      if (!entry) throw new NotFound(resource, id);
      ctx.set('ETag', etag(entry));
      ctx.type = 'application/json';
      ctx.body = entryBody(resource, {}, entry);
      return;
    }
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
    const items = await service.readFresh(() => service.history(resource, id));
    // An event an approved request caused: who asked for it and who approved it (section 16).
    const approved = executedApprovals(service.state);
    ctx.body = {
      items: approved.size === 0 ? items : items.map((item) => withApproval(item, approved.get(item.request_id))),
    };
  },
};

function withApproval<T extends object>(item: T, approval: ApprovedBy | undefined): T | (T & { approval: ApprovedBy }) {
  return approval ? { ...item, approval } : item;
}
