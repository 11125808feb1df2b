import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ConfigService } from '../application/service.js';
import type { AccessSettings } from '../config.js';
import { isConfigurationName } from '../domain/resources.js';
import type { Role } from '../domain/tokens/resource.js';
import { entryRead, entryRoute } from './entry-read.js';
import type { HostCheck } from './hosts.js';
import { authorize, identifyBy } from './identity.js';
import { edgeHeaders, logRequest, requestIdOf } from './middleware.js';
import type { Metrics, Readiness } from './operations.js';
import { isCanonicalId } from './request.js';
import { CONFIG_BASE, SHAPES } from './routes/descriptors.js';

/** `GET /fr/api/config/{resource}/{id}` as the router matches it, without a query. */
const READ = new RegExp(`^${CONFIG_BASE}/([a-z-]+)/([^/?]+)$`);
const READ_ACCESS = SHAPES.find(([kind]) => kind === 'read')![3];

export interface FastReadDeps {
  service: ConfigService;
  logger: Logger;
  metrics: Metrics;
  access?: AccessSettings;
  hosts: HostCheck;
  /** A stopping instance closes every connection after its answer: Koa answers then. */
  readiness?: Readiness;
}

/**
 * Reading one entry is the call clients make most, and most of its cost was Koa's: the context,
 * seven middleware and the router, around a lookup in memory. The plain case is answered here,
 * before Koa: a GET of an entry that exists, with no query, no `If-None-Match`, no CORS to answer
 * (none configured) and a caller allowed to read. This module only decides that a request is such
 * a read: its answer is `entryRead` (entry-read.ts) after `edgeHeaders`, as the Koa route sends it,
 * with the same access-log line and metrics; `test/http/fast-read.test.ts` holds the two side by
 * side (bench/http.ts read-one and mixed). Every other request, and any request
 * the plain case cannot answer (an unknown or hard-deleted entry, a refused token), goes to `koa`,
 * which answers it in full.
 */
export function withFastReads(deps: FastReadDeps, koa: RequestListener): RequestListener {
  if ((deps.access?.corsOrigins ?? []).length > 0) return koa;
  const anonymousRole = deps.access?.anonymousRole ?? 'writer';
  return (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const plain = deps.hosts(req.headers.host) && !deps.readiness?.stopping;
    const found = plain ? plainRead(req, deps.service, anonymousRole) : undefined;
    if (!found) return koa(req, res);
    const { resource, entry, actor } = found;
    const requestId = requestIdOf(headerOf(req.headers['x-request-id']));
    const route = entryRoute(resource);
    const client = req.socket.remoteAddress;
    logRequest(deps.logger, { method: 'GET', route, path: req.url!, status: 200, started, client, actor, requestId });
    deps.metrics.record(route, 'GET', 200, started);
    const { headers, body } = entryRead(resource, entry);
    res.writeHead(
      200,
      [...edgeHeaders(requestId), ...headers, ['Content-Length', String(Buffer.byteLength(body))]].flat(),
    );
    res.end(body);
  };
}

/** The entry a plain read asks for, and who asks; undefined when Koa must answer. */
function plainRead(req: IncomingMessage, service: ConfigService, anonymousRole: Role | 'none') {
  const { headers } = req;
  if (req.method !== 'GET' || headers['if-none-match'] !== undefined || headers['change-set'] !== undefined)
    return undefined;
  const match = READ.exec(req.url ?? '');
  if (!match || !isConfigurationName(match[1]) || !isCanonicalId(match[2])) return undefined;
  const [, resource, id] = match;
  const entry = service.state.collections[resource].get(Number(id));
  if (!entry) return undefined;
  try {
    const principal = identifyBy(req.headers.authorization ?? '', service, anonymousRole);
    authorize(principal, READ_ACCESS);
    return { resource, entry, actor: principal.actor };
  } catch {
    return undefined;
  }
}

/** A header's value as Koa's `ctx.get` gives it: '' when absent. */
const headerOf = (value: string | string[] | undefined): string =>
  Array.isArray(value) ? value.join(', ') : (value ?? '');
