import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { pooledRandom } from '../application/random.js';

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

const randomId = pooledRandom(16);

/**
 * A new request id: a UUID of version 7 (RFC 9562), whose first 48 bits are the time in ms. Ids made
 * one after another sort one after another, so the change log's request index grows at its end
 * instead of writing a page at a random place for every change (a random UUID cost about a sixth
 * of the throughput of POST).
 */
export function newRequestId(now = Date.now()): string {
  const bytes = randomId();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The request's id: the client's `X-Request-ID` when it is a sane token, else a new one. */
export const requestIdOf = (sent: string): string => (REQUEST_ID.test(sent) ? sent : newRequestId());

/** `X-Request-ID` from the client when it is a sane token, else a new one; echoed on every response. */
export async function requestContext(ctx: Context, next: Next) {
  ctx.state.requestId = requestIdOf(ctx.get('X-Request-ID'));
  ctx.set('X-Request-ID', ctx.state.requestId);
  await next();
}

/** What the access log says of one request; `started` is `performance.now()` when it came in. */
export interface RequestLine {
  method: string;
  route: string | null;
  path: string;
  status: number;
  started: number;
  client: string | undefined;
  /** null: not identified (a refused token, or a route open to all) */
  actor: string | null;
  requestId: string;
  code?: string;
  replayed?: boolean;
}

/**
 * One JSON line per request: method, route template, status, duration, client address, actor,
 * request id and the error code of a refusal. Never a body, a secret or a token. The Koa middleware
 * below and the fast read path (fast-read.ts) both write it.
 */
export function logRequest(logger: Logger, line: RequestLine): void {
  logger.info(
    {
      method: line.method,
      route: line.route,
      path: line.path,
      status: line.status,
      ms: Math.round((performance.now() - line.started) * 10) / 10,
      client: line.client,
      actor: line.actor,
      request_id: line.requestId,
      ...(line.code ? { code: line.code } : {}),
      ...(line.replayed ? { replayed: true } : {}),
    },
    'request',
  );
}

/**
 * The route template a request matched (`/fr/api/config/servers/:id`), or undefined: what logs and
 * metrics name it by. @koa/router keeps it on the context (`_matchedRoute`); the routes name the
 * resource in it (app.ts), and the fast path names its own with `entryRoute` (entry-read.ts).
 */
export const routeOf = (ctx: Context): string | undefined =>
  (ctx as Context & { _matchedRoute?: string })._matchedRoute;

/** Names the resource in the route template matched so far (see routeOf). */
export function nameResource(ctx: Context, resource: string): void {
  const matched = ctx as Context & { _matchedRoute?: string };
  matched._matchedRoute = matched._matchedRoute?.replace(':resource', resource);
}

export function accessLog(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logRequest(logger, {
        method: ctx.method,
        route: routeOf(ctx) ?? null,
        path: ctx.path,
        status: ctx.status,
        started,
        client: ctx.req.socket.remoteAddress,
        actor: ctx.state.actor ?? null,
        requestId: ctx.state.requestId,
        code: ctx.state.errorCode,
        replayed: Boolean(ctx.response.get('Idempotent-Replayed')),
      });
    }
  };
}

/** Every answer: no content sniffing, and (API answers) never cached anywhere. */
export const HARDENING_HEADERS: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Cache-Control', 'no-store'],
];

/** The headers every answer starts with, in the order the middlewares set them: the request id, then hardening. */
export const edgeHeaders = (requestId: string): [string, string][] => [
  ['X-Request-ID', requestId],
  ...HARDENING_HEADERS,
];

export async function hardening(ctx: Context, next: Next) {
  for (const [name, value] of HARDENING_HEADERS) ctx.set(name, value);
  await next();
}

const ALLOWED_HEADERS =
  'Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, X-Request-ID, Last-Event-ID';
const EXPOSED_HEADERS = 'ETag, Location, X-Request-ID, Idempotent-Replayed, Retry-After, WWW-Authenticate, Allow';

/** CORS for the listed origins only (off when there are none); preflights are answered by the routes' OPTIONS. */
export function cors(origins: string[]) {
  const allowed = new Set(origins);
  return async (ctx: Context, next: Next) => {
    const origin = ctx.get('Origin');
    if (allowed.size > 0) ctx.vary('Origin');
    if (!origin || !allowed.has(origin)) return next();
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '600');
    }
    await next();
    const allow = ctx.response.get('Allow');
    if (ctx.method === 'OPTIONS' && allow) ctx.set('Access-Control-Allow-Methods', allow);
  };
}

export async function trailingSlash(ctx: Context, next: Next) {
  if (ctx.path.length > 1 && ctx.path.endsWith('/')) ctx.path = ctx.path.replace(/\/+$/, '') || '/';
  await next();
}
