import type { Context } from 'koa';
import type { OperationObject, TagObject } from 'openapi3-ts/oas31';
import type { ConfigService, ParseWrite } from '../application/service.js';
import type { Principal } from '../application/tokens.js';
import type { Access } from './identity.js';
import type { Method } from './routes/descriptors.js';
import type { ConfigView } from './view.js';

/**
 * The plug point for routes: a wing (src/<wing>/) brings its routes as one module — what the router
 * mounts, what each answers, and how the OpenAPI document describes each — and `main.ts` hands the
 * modules to `createHandler` (http/app.ts) and `buildOpenApi` (openapi/build.ts), which name none.
 * What a handler needs of HTTP (bodies, queries, writes with an Idempotency-Key) is exported here too.
 */

/** One route of a module. `kind` names its handler and its operation within the module. */
export interface ModuleRoute {
  kind: string;
  method: Method;
  /** OpenAPI form: `/fr/api/log/leaves/{position}`. */
  path: string;
  access: Access;
  /** Also takes Basic authentication, the token as the password (PmaControl's scripts send Basic). */
  basic?: boolean;
  /**
   * Basic credentials of another system this route also takes, when they are not a token's
   * (PmaControl's webservice users): the principal they stand for, or undefined.
   */
  otherCredentials?: OtherCredentials;
}

/** Checks a user and password of another system: the principal, or undefined when they are not its. */
export type OtherCredentials = (user: string, password: string) => Promise<Principal | undefined>;

/** What the core gives a module's handlers. */
export interface ModuleDeps {
  service: ConfigService;
  /** Checks and completes a write body as the configuration routes do. */
  parse: ParseWrite;
}

export type RouteHandle = (ctx: Context) => unknown;

export interface RouteModule {
  /** The OpenAPI tags its operations use, in the order the document lists them. */
  tags: readonly TagObject[];
  routes: readonly ModuleRoute[];
  /** The OpenAPI operation of each route kind (it needs no running service: `openapi` builds without one). */
  operations: Readonly<Record<string, () => OperationObject>>;
  /** The handler of each route kind. */
  handlers(deps: ModuleDeps): Record<string, RouteHandle>;
  /** The view a request asks for (a header of its own), or undefined: the configuration reads use it. */
  view?(deps: ModuleDeps): (ctx: Context) => ConfigView | undefined;
}

export { type BodyBounds, readJson, readJsonBounded } from './body.js';
export { invalidHeader, invalidQuery, RequestError } from './errors.js';
export { entryJson } from './list-body.js';
export { parseMoment } from './moments.js';
export { expectedVersion, parseId, refuseQuery, singleParameters } from './request.js';
export type { ConfigView } from './view.js';
export { callerOf, jsonResponse, write } from './writes.js';
