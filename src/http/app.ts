import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import type { Logger } from 'pino';
import type { ConfigService } from '../application/service.js';
import { isResourceName } from '../domain/resources.js';
import { WriteValidator } from '../schemas/validator.js';
import { errorHandler, methodNotAllowed, unknownResource, unknownRoute } from './errors.js';
import { refuseQuery } from './request.js';
import { changeStream, changes, diff, KEEP_ALIVE_MS } from './routes/audit.js';
import {
  API_ROUTES,
  type ApiRouteKind,
  allowedMethods,
  CONFIG_BASE,
  type Method,
  ROUTES,
} from './routes/descriptors.js';
import { HANDLERS } from './routes/handlers.js';

export interface AppDeps {
  service: ConfigService;
  logger: Logger;
  openapi: OpenAPIObject;
  /** How often the live feed sends a comment while nothing happens (tests shorten it). */
  keepAliveMs?: number;
}

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

/** `X-Request-ID` from the client when it is a sane token, else a new one; echoed on every response. */
async function requestContext(ctx: Context, next: Next) {
  const sent = ctx.get('X-Request-ID');
  ctx.state.requestId = REQUEST_ID.test(sent) ? sent : randomUUID();
  ctx.state.actor = 'anonymous'; // no credentials yet: bearer tokens will set it
  ctx.set('X-Request-ID', ctx.state.requestId);
  await next();
}

function accessLog(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // Method, path and status only: bodies (and so secrets) are never logged.
      logger.info(
        {
          request_id: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    }
  };
}

async function trailingSlash(ctx: Context, next: Next) {
  if (ctx.path.length > 1 && ctx.path.endsWith('/')) ctx.path = ctx.path.replace(/\/+$/, '') || '/';
  await next();
}

function notFound(ctx: Context) {
  const rest = ctx.path.startsWith(`${CONFIG_BASE}/`) ? ctx.path.slice(CONFIG_BASE.length + 1) : undefined;
  const name = rest?.split('/')[0];
  if (name && !isResourceName(name)) throw unknownResource(name);
  throw unknownRoute(ctx.path);
}

/** The routes about the whole configuration or the API itself. */
function apiHandlers({ service, openapi, keepAliveMs }: AppDeps): Record<ApiRouteKind, (ctx: Context) => unknown> {
  return {
    changes: (ctx) => changes(ctx, service),
    changeStream: (ctx) => changeStream(ctx, service, keepAliveMs ?? KEEP_ALIVE_MS),
    diff: (ctx) => diff(ctx, service),
    openApi: (ctx) => {
      refuseQuery(ctx);
      ctx.body = openapi;
    },
  };
}

export function createApp(deps: AppDeps): Koa {
  const { service, logger } = deps;
  const app = new Koa();
  const router = new Router();
  const handlerDeps = { service, validator: new WriteValidator() };
  const byPath = new Map<string, Method[]>();
  const mount = (openApiPath: string, method: Method, handle: (ctx: Context) => unknown) => {
    const path = openApiPath.replace('{id}', ':id');
    byPath.set(path, [...(byPath.get(path) ?? []), method]);
    router.register(path, [method], handle as (ctx: Context) => Promise<void>);
  };
  for (const route of ROUTES) {
    mount(route.path, route.method, (ctx) => HANDLERS[route.kind](ctx, route.resource, handlerDeps));
  }
  const api = apiHandlers(deps);
  for (const route of API_ROUTES) mount(route.path, route.method, api[route.kind]);
  for (const [path, methods] of byPath) {
    router.all(path, (ctx: Context) => {
      const allow = allowedMethods(methods);
      if (ctx.method !== 'OPTIONS') throw methodNotAllowed(ctx.method, allow);
      ctx.set('Allow', allow.join(', '));
      ctx.status = 204;
    });
  }
  app.use(requestContext);
  app.use(accessLog(logger));
  app.use(errorHandler(logger));
  app.use(trailingSlash);
  app.use(router.routes());
  app.use(notFound);
  return app;
}
