import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { ChangeItem } from '../../../projections/changes.js';
import type { DiffReport } from '../../application/changes.js';
import type { FeedClient, FeedFilter } from '../../application/changes-feed.js';
import type { ConfigService } from '../../application/service.js';
import type { Principal } from '../../application/tokens.js';
import { ADMIN_COLLECTIONS, isCollectionName } from '../../domain/resources.js';
import type { ChangeQuery } from '../../read-models/port.js';
import { CSV_HEADER, csvRows, streamed, take } from '../changes-formats.js';
import { invalidQuery } from '../errors.js';
import { forbidden } from '../identity.js';
import { entryJson } from '../list-body.js';
import { parseMoment, parsePosition, parseTime } from '../moments.js';
import { pacedBody } from '../paced.js';
import { parseId, singleParameters } from '../request.js';
import { API_BASE } from './descriptors.js';

type Params = Record<string, string>;

const text = (name: string, value: string | undefined) => {
  if (value !== undefined && (value.length === 0 || value.length > 255)) {
    throw invalidQuery(`${name} must be 1 to 255 characters`);
  }
  return value;
};

/**
 * `resource`, `id`, `actor`, `type`: the filters the change log and the live feed share. The events of
 * tokens and event rules are for admins: others never see them, and asking for them by resource is a 403.
 */
function parseFilter(ctx: Context, params: Params): FeedFilter {
  const { resource, id, actor, type } = params;
  if (resource !== undefined && !isCollectionName(resource))
    throw invalidQuery(`there is no resource "${resource.slice(0, 40)}"`);
  if (id !== undefined && resource === undefined) throw invalidQuery('id needs resource');
  const admin = (ctx.state.principal as Principal).role === 'admin';
  if (resource !== undefined && ADMIN_COLLECTIONS.includes(resource) && !admin)
    throw forbidden(`the history of ${resource} is for admins`);
  const filter: FeedFilter = { admin };
  if (resource !== undefined) filter.resource = resource;
  if (id !== undefined) filter.id = parseIdParam(id);
  if (actor !== undefined) filter.actor = text('actor', actor);
  if (type !== undefined) filter.type = text('type', type);
  return filter;
}

function parseIdParam(raw: string): number {
  try {
    return parseId(raw);
  } catch {
    throw invalidQuery('id must be a decimal integer from 1');
  }
}

const CHANGE_PARAMS = [
  'change_set',
  'resource',
  'id',
  'actor',
  'request_id',
  'type',
  'since',
  'until',
  'after',
  'before',
  'limit',
  'order',
];

function parseChangeQuery(ctx: Context, params: Params): { query: ChangeQuery; limit?: number } {
  const order = params.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw invalidQuery('order must be asc or desc');
  if (order === 'desc' && params.after !== undefined) throw invalidQuery('with order=desc, use before, not after');
  if (order === 'asc' && params.before !== undefined) throw invalidQuery('before goes with order=desc');
  const query: ChangeQuery = { ...parseFilter(ctx, params), order };
  if (params.request_id !== undefined) query.request_id = text('request_id', params.request_id);
  if (params.since !== undefined) query.since = parseTime('since', params.since);
  if (params.until !== undefined) query.until = parseTime('until', params.until);
  if (params.after !== undefined) query.after = parsePosition('after', params.after);
  if (params.before !== undefined) query.before = parsePosition('before', params.before);
  if (params.limit === undefined) return { query };
  const limit = Number(params.limit);
  if (!/^[1-9][0-9]{0,3}$/.test(params.limit) || limit > 1000) throw invalidQuery('limit must be from 1 to 1000');
  return { query, limit };
}

/** The path and query of the page after `last`, with the same filters. */
function nextPage(params: Params, last: ChangeItem): string {
  const next = new URLSearchParams(params);
  next.delete('after');
  next.delete('before');
  next.set(params.order === 'desc' ? 'before' : 'after', String(last.position));
  return `${API_BASE}/changes?${next}`;
}

/** `GET /fr/api/changes`: a page of JSON, or every matching change as NDJSON or CSV, streamed. */
export async function changes(ctx: Context, service: ConfigService): Promise<void> {
  const params = singleParameters(ctx, CHANGE_PARAMS);
  const { query, limit } = parseChangeQuery(ctx, params);
  if (params.change_set !== undefined) query.request_id = mergeRequestOf(service, params);
  const items = service.changes.changes(query);
  const format = ctx.accepts('application/json', 'application/x-ndjson', 'text/csv');
  if (format === 'application/x-ndjson') {
    ctx.type = 'application/x-ndjson';
    ctx.body = streamed(take(items, limit), (item) => `${JSON.stringify(item)}\n`);
  } else if (format === 'text/csv') {
    ctx.type = 'text/csv; charset=utf-8';
    ctx.body = streamed(take(items, limit), csvRows, `${CSV_HEADER}\r\n`);
  } else {
    const page: ChangeItem[] = [];
    for await (const item of take(items, (limit ?? 100) + 1)) page.push(item);
    const more = page.length > (limit ?? 100);
    if (more) page.pop();
    ctx.body = { items: page, next: more ? nextPage(params, page[page.length - 1]) : null };
  }
}

/** `GET /fr/api/diff?from=&to=`: the net change between two moments, streamed as it is worked out. */
export async function diff(ctx: Context, service: ConfigService): Promise<void> {
  const params = singleParameters(ctx, ['from', 'to']);
  if (params.from === undefined) throw invalidQuery('from is required: a position or an ISO 8601 date-time');
  const from = parseMoment('from', params.from);
  const to = params.to === undefined ? { position: Number.MAX_SAFE_INTEGER } : parseMoment('to', params.to);
  const report = await service.changes.diff(from, to);
  ctx.type = 'application/json';
  ctx.body = pacedBody(diffPieces(report));
}

/** Entries (or diffs) per piece of a difference's answer. */
const DIFF_PIECE = 256;

/** The pieces of a difference's JSON, each resource as it comes, created entries shown as GET shows them. */
async function* diffPieces(report: DiffReport): AsyncIterable<string> {
  yield `{"from":${JSON.stringify(report.from)},"to":${JSON.stringify(report.to)},"resources":{`;
  let first = true;
  for await (const [name, part] of report.resources) {
    yield `${first ? '' : ','}${JSON.stringify(name)}:{"created":[`;
    first = false;
    yield* listPieces(part.created, (entry) => entryJson(name, entry, false));
    yield '],"updated":[';
    yield* listPieces(part.updated, (one) => JSON.stringify(one));
    yield `],"deleted":${JSON.stringify(part.deleted)}}`;
  }
  yield '}}';
}

/** The members of a JSON array, DIFF_PIECE to a piece, with the commas between them. */
function* listPieces<T>(items: T[], json: (item: T) => string): Iterable<string> {
  for (let start = 0; start < items.length; start += DIFF_PIECE) {
    const piece = items.slice(start, start + DIFF_PIECE).map((item) => json(item));
    yield `${start > 0 ? ',' : ''}${piece.join(',')}`;
  }
}

/** How often a comment line is sent while nothing happens (section 8 asks for at least every 15 s). */
export const KEEP_ALIVE_MS = 15_000;

/** Each change's event text, made once for all the clients it goes to. */
const events = new WeakMap<ChangeItem, string>();

function eventOf(item: ChangeItem): string {
  let text = events.get(item);
  if (text === undefined) {
    text = `id: ${item.position}\nevent: change\ndata: ${JSON.stringify(item)}\n\n`;
    events.set(item, text);
  }
  return text;
}

/**
 * A live client over the response: what it has not read yet is the response's buffer, and cutting
 * it off destroys the socket (its buffer freed at once; ending the response would wait for a client
 * that does not read).
 */
function feedClient(res: ServerResponse): FeedClient {
  const open = () => !res.destroyed && !res.writableEnded;
  return {
    write: (items) => {
      if (open()) res.write(items.length === 1 ? eventOf(items[0]) : items.map(eventOf).join(''));
    },
    get buffered() {
      return res.writableLength;
    },
    drained: () =>
      new Promise((resolve) => {
        if (!open() || res.writableLength === 0) return resolve();
        // Whichever comes first removes the other: a catch-up waits here once per page.
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      }),
    get gone() {
      return !open();
    },
    drop: () => res.destroy(),
  };
}

/**
 * A comment line every `keepAliveMs`. A client that has something unread and took nothing since the
 * last one, twice in a row, has stopped reading: it is cut off.
 */
function keepAlive(res: ServerResponse, keepAliveMs: number): NodeJS.Timeout {
  let stalled = 0;
  let taken = -1;
  return setInterval(() => {
    if (res.destroyed || res.writableEnded) return;
    const now = res.socket?.bytesWritten ?? 0;
    stalled = res.writableLength > 0 && now === taken ? stalled + 1 : 0;
    taken = now;
    if (stalled >= 2) res.destroy();
    else res.write(': keep-alive\n\n');
  }, keepAliveMs);
}

/** `GET /fr/api/changes/stream`: Server-Sent Events, from the last id the client saw, then live. */
export async function changeStream(ctx: Context, service: ConfigService, keepAliveMs: number): Promise<void> {
  const params = singleParameters(ctx, ['resource', 'id', 'actor', 'type', 'after']);
  const filter = parseFilter(ctx, params);
  const lastId = ctx.get('Last-Event-ID') || params.after;
  const after = lastId === undefined ? service.revision + 1 : parsePosition('Last-Event-ID or after', lastId);
  if (ctx.method === 'HEAD') {
    ctx.type = 'text/event-stream';
    ctx.status = 200;
    return;
  }
  service.feed.admit();
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(200, ctx.response.headers as Record<string, string>);
  res.write(': connected\n\n');
  const timer = keepAlive(res, keepAliveMs);
  let stop = () => {};
  res.once('close', () => {
    clearInterval(timer);
    stop();
  });
  stop = await service.feed.subscribe(filter, after, feedClient(res));
  if (res.destroyed) stop();
}

/**
 * `change_set`: what a change set did — the events of its merge (their request's id); none while it is
 * not merged.
 */
function mergeRequestOf(service: ConfigService, params: Params): string {
  if (params.request_id !== undefined) throw invalidQuery('change_set and request_id cannot go together');
  if (!/^[1-9][0-9]{0,15}$/.test(params.change_set!)) throw invalidQuery('change_set must be the id of a change set');
  const entry = service.state.collections['change-sets'].get(Number(params.change_set));
  // No request has this id: a change set not merged has done nothing.
  return (entry?.merge_request_id as string | null) ?? '\u0000not merged';
}
