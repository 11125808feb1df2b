import type { RequestListener } from 'node:http';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import type { Logger } from 'pino';
import type { ConfigService, ParseWrite } from '../application/service.js';
import type { Principal } from '../application/tokens.js';
import type { AccessSettings } from '../config.js';
import { isConfigurationName, RESOURCE_NAMES, resourceOf } from '../domain/resources.js';
import type { Role } from '../domain/tokens/resource.js';
import { type CiphertextOpener, WriteValidator } from '../schemas/validator.js';
import { consoleRoutes } from './console.js';
import { docsAsset, docsPage } from './docs.js';
import { errorHandler, methodNotAllowed, misdirected, unknownResource, unknownRoute } from './errors.js';
import { withFastReads } from './fast-read.js';
import { type HostCheck, hostCheck } from './hosts.js';
import { type Access, authorize, basicCredentials, identifyFresh, Unauthorized } from './identity.js';
import { accessLog, cors, hardening, nameResource, requestContext, trailingSlash } from './middleware.js';
import { healthz, Metrics, metrics, Readiness, readyz } from './operations.js';
import { refuseQuery } from './request.js';
import type { ConfigView, OtherCredentials, RouteModule } from './route-module.js';
import { changeStream, changes, diff, KEEP_ALIVE_MS } from './routes/changes.js';
import {
  API_ROUTES,
  type ApiRouteDescriptor,
  type ApiRouteKind,
  accessOf,
  allowedMethods,
  CONFIG_BASE,
  entriesPath,
  type HandlerDeps,
  type Method,
  SERVICE_ROUTES,
  SHAPES,
} from './routes/descriptors.js';
import { HANDLERS } from './routes/handlers.js';
import { issueToken, listTokens, revealSecret, revokeToken, whoami } from './routes/tokens.js';
import { exportConfiguration, importConfiguration } from './routes/transfer.js';

export interface AppDeps {
  service: ConfigService;
  logger: Logger;
  openapi: OpenAPIObject;
  /** Who may do what without a token, and CORS; the defaults of a service on a loopback address. */
  access?: AccessSettings;
  /** How often the live feed sends a comment while nothing happens (tests shorten it). */
  keepAliveMs?: number;
  /** The instance's metrics (made here when not given) and whether it is stopping (for /readyz). */
  metrics?: Metrics;
  readiness?: Readiness;
  /** Opens the ciphertexts a resource's crypted flag announces (PmaControl's, `is_password_crypted`), if given a key. */
  openCrypted?: CiphertextOpener;
  /** The write bodies' validator (made here, with `openCrypted`, when not given). */
  validator?: WriteValidator;
  /** The names this service answers to (made here for a loopback listener when not given). */
  hosts?: HostCheck;
  /** The wings' routes (see route-module.ts), mounted after the core's own. */
  modules?: readonly RouteModule[];
}

type ResolvedDeps = AppDeps & { metrics: Metrics; hosts: HostCheck };

type Handle = (ctx: Context) => unknown;
/** A route of API_ROUTES: its handler is given the route it was mounted for. */
type RouteHandle = (ctx: Context, route: ApiRouteDescriptor) => unknown;

function notFound(ctx: Context) {
  const rest = ctx.path.startsWith(`${CONFIG_BASE}/`) ? ctx.path.slice(CONFIG_BASE.length + 1) : undefined;
  const name = rest?.split('/')[0];
  if (name && !isConfigurationName(name)) throw unknownResource(name);
  throw unknownRoute(ctx.path);
}

/** The routes about the whole configuration, the tokens, or the API itself. */
function apiHandlers(deps: ResolvedDeps, validator: WriteValidator): Record<ApiRouteKind, RouteHandle> {
  const { service, openapi, keepAliveMs } = deps;
  const readiness = deps.readiness ?? new Readiness();
  return {
    healthz,
    docs: docsPage,
    docsAsset,
    readyz: (ctx) => readyz(ctx, service, readiness),
    metrics: (ctx) => metrics(ctx, deps.metrics.registry),
    changes: (ctx) => changes(ctx, service),
    changeStream: (ctx) => changeStream(ctx, service, keepAliveMs ?? KEEP_ALIVE_MS),
    diff: (ctx) => diff(ctx, service),
    export: (ctx) => exportConfiguration(ctx, service),
    import: (ctx) => importConfiguration(ctx, service, validator),
    whoami,
    listTokens: (ctx) => listTokens(ctx, service),
    issueToken: (ctx) => issueToken(ctx, service),
    revokeToken: (ctx) => revokeToken(ctx, service),
    secret: (ctx, route) => revealSecret(ctx, service, route.resource!),
    openApi: (ctx) => {
      refuseQuery(ctx);
      ctx.body = openapi;
    },
  };
}

/**
 * Identifies the caller (a bad token is a 401, never anonymous) and checks the route's access;
 * `basic`: the route also takes Basic authentication.
 */
function guarded(access: Access, handle: Handle, deps: AppDeps, basic = false, other?: OtherCredentials): Handle {
  const anonymousRole = deps.access?.anonymousRole ?? 'writer';
  return async (ctx) => {
    if (access !== 'open') {
      const principal = other
        ? await identifyOrOther(ctx, deps.service, anonymousRole, other)
        : await identifyFresh(ctx, deps.service, anonymousRole, basic);
      ctx.state.principal = principal;
      ctx.state.actor = principal.actor;
      authorize(principal, access, basic);
    }
    return handle(ctx);
  };
}

/** A token (bearer, or Basic's password), else Basic credentials another system knows; a refusal as for a bad token. */
async function identifyOrOther(
  ctx: Context,
  service: ConfigService,
  anonymousRole: Role | 'none',
  other: OtherCredentials,
): Promise<Principal> {
  try {
    return await identifyFresh(ctx, service, anonymousRole, true);
  } catch (error) {
    const credentials = basicCredentials(ctx.get('Authorization'));
    if (!(error instanceof Unauthorized) || !credentials) throw error;
    const principal = await other(credentials.user, credentials.password);
    if (!principal) throw error;
    return principal;
  }
}

type Mount = (openApiPath: string, method: Method, access: Access, handle: Handle) => void;

/**
 * The entry routes: one per shape for every configuration resource at once (a router walks its
 * routes in turn; 56 of them were most of a small read's routing time), and those of each admins'
 * resource (event rules) at a path of its own, every one for admins.
 */
function mountEntryRoutes(mount: Mount, handlerDeps: HandlerDeps): void {
  for (const [kind, method, suffix, access] of SHAPES) {
    mount(`${CONFIG_BASE}/{resource}${suffix}`, method, access, (ctx) =>
      HANDLERS[kind](ctx, ctx.state.resource, handlerDeps),
    );
  }
  for (const resource of RESOURCE_NAMES.filter((name) => resourceOf(name).declaration.scope === 'admin')) {
    for (const [kind, method, suffix, access] of SHAPES) {
      mount(`${entriesPath(resource)}${suffix}`, method, accessOf(resource, access), (ctx) =>
        HANDLERS[kind](ctx, resource, handlerDeps),
      );
    }
  }
}

/** The view a request asks for, from the first route module that gives one (a change set's). */
function viewsOf(deps: ResolvedDeps, parse: ParseWrite): (ctx: Context) => ConfigView | undefined {
  const views = (deps.modules ?? []).flatMap((module) =>
    module.view ? [module.view({ service: deps.service, parse })] : [],
  );
  return (ctx) => {
    for (const view of views) {
      const found = view(ctx);
      if (found) return found;
    }
    return undefined;
  };
}

function routes(deps: ResolvedDeps): Router {
  const router = new Router();
  const validating = deps.validator ?? new WriteValidator(deps.openCrypted);
  const parsing: ParseWrite = (resource, mode, body) => validating.parse(resource, mode, body).input;
  const handlerDeps = { service: deps.service, validator: validating, viewOf: viewsOf(deps, parsing) };
  const byPath = new Map<string, Method[]>();
  const mount = (
    openApiPath: string,
    method: Method,
    access: Access,
    handle: Handle,
    basic?: boolean,
    other?: OtherCredentials,
  ) => {
    const path = openApiPath.replace(/\{(\w+)\}/g, ':$1');
    byPath.set(path, [...(byPath.get(path) ?? []), method]);
    router.register(path, [method], guarded(access, handle, deps, basic, other) as (ctx: Context) => Promise<void>);
  };
  // The resource of a configuration route is checked first (a 404 for an unknown one, whatever the
  // caller), and the route template in logs and metrics names it.
  router.param('resource', (resource, ctx, next) => {
    if (!isConfigurationName(resource)) throw unknownResource(resource);
    ctx.state.resource = resource;
    nameResource(ctx, resource);
    return next();
  });
  mountEntryRoutes(mount, handlerDeps);
  const api = apiHandlers(deps, handlerDeps.validator);
  for (const route of API_ROUTES) mount(route.path, route.method, route.access, (ctx) => api[route.kind](ctx, route));
  for (const module of deps.modules ?? []) {
    const handlers = module.handlers({ service: deps.service, parse: parsing });
    for (const route of module.routes) {
      mount(route.path, route.method, route.access, handlers[route.kind], route.basic, route.otherCredentials);
    }
  }
  for (const route of SERVICE_ROUTES)
    mount(route.path, route.method, route.access, (ctx) => api[route.kind](ctx, route));
  for (const [path, methods] of byPath) {
    router.all(path, (ctx: Context) => {
      const allow = allowedMethods(methods);
      if (ctx.method !== 'OPTIONS') throw methodNotAllowed(ctx.method, allow);
      ctx.set('Allow', allow.join(', '));
      ctx.status = 204;
    });
  }
  return router;
}

/**
 * Koa tests every answer that is neither a Buffer nor a string against Blob, ReadableStream and
 * Response, globals that Node loads on first use: loaded here, at start, rather than inside the
 * first such answer (bench/http.ts, first requests after a start).
 */
function loadBodyClasses(): void {
  void [Blob, ReadableStream, Response];
}

/**
 * What the HTTP server runs: the fast read path (fast-read.ts) in front of the Koa app, sharing its
 * logger and metrics.
 */
export function createHandler(given: AppDeps): RequestListener {
  const deps = resolved(given);
  return withFastReads(deps, createApp(deps).callback());
}

/** The deps with the instance's metrics and Host check, made here when not given. */
const resolved = (given: AppDeps): ResolvedDeps => ({
  ...given,
  metrics: given.metrics ?? new Metrics(given.openapi.info.version).watch(given.service),
  hosts: given.hosts ?? hostCheck('127.0.0.1', given.access?.allowedHosts),
});

/** While the instance stops, every answer closes its connection: clients reconnect to another instance. */
const closingConnections = (readiness?: Readiness) => (ctx: Context, next: () => Promise<void>) => {
  if (readiness?.stopping) ctx.set('Connection', 'close');
  return next();
};

/** A 421 for a Host this service does not answer to (DNS rebinding), before anything else is done. */
const hostGuard = (hosts: HostCheck) => (ctx: Context, next: () => Promise<void>) => {
  const host = ctx.get('Host');
  if (!hosts(host)) throw misdirected(host);
  return next();
};

export function createApp(given: AppDeps): Koa {
  const deps = resolved(given);
  loadBodyClasses();
  const app = new Koa();
  // A client that goes away mid-answer is not the service's error: logged at debug, never on stderr.
  app.silent = true;
  app.on('error', (error: Error & { code?: string }) => {
    deps.logger.debug({ err: { message: error.message, code: error.code } }, 'client connection closed early');
  });
  app.use(requestContext);
  app.use(accessLog(deps.logger));
  app.use(deps.metrics.measure());
  app.use(hardening);
  app.use(closingConnections(deps.readiness));
  app.use(errorHandler(deps.logger));
  // Inside the error handler: a refusal (an unknown path's preflight) is a problem+json, with CORS.
  app.use(cors(deps.access?.corsOrigins ?? []));
  app.use(hostGuard(deps.hosts));
  app.use(consoleRoutes);
  app.use(trailingSlash);
  app.use(routes(deps).routes());
  app.use(notFound);
  return app;
}
