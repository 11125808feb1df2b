import type { Context } from 'koa';
import type { ConfigService } from '../../application/service.js';
import { CONFIGURATION_NAMES, RESOURCE_NAMES, type ResourceName, resourceOf } from '../../domain/resources.js';
import type { WriteValidator } from '../../schemas/validator.js';
import type { Access } from '../identity.js';
import type { ConfigView } from '../view.js';

export const API_BASE = '/fr/api';
export const CONFIG_BASE = `${API_BASE}/config`;
export const OPENAPI_PATH = `${API_BASE}/openApi`;

/** What the configuration routes' handlers are given. */
export interface HandlerDeps {
  service: ConfigService;
  validator: WriteValidator;
  /** The view a request asks for (a change set applied), from the route modules; undefined: the state now. */
  viewOf?: (ctx: Context) => ConfigView | undefined;
}

export type RouteKind = 'list' | 'read' | 'create' | 'replace' | 'patch' | 'delete' | 'history' | 'revert';
export type ApiRouteKind =
  | 'changes'
  | 'changeStream'
  | 'diff'
  | 'export'
  | 'import'
  | 'openApi'
  | 'whoami'
  | 'listTokens'
  | 'issueToken'
  | 'revokeToken'
  | 'secret'
  | 'healthz'
  | 'readyz'
  | 'metrics'
  | 'docs'
  | 'docsAsset';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One route of a configuration resource: what the router mounts and what the OpenAPI builder documents. */
export interface RouteDescriptor {
  kind: RouteKind;
  method: Method;
  /** OpenAPI form: `/fr/api/config/tags/{id}`. */
  path: string;
  resource: ResourceName;
  access: Access;
}

/** One route about the whole configuration or the API itself. */
export interface ApiRouteDescriptor {
  kind: ApiRouteKind;
  method: Method;
  path: string;
  access: Access;
  /** The resource a `secret` route reveals the secrets of. */
  resource?: ResourceName;
}

/** The routes every configuration resource has: kind, method, path after `/config/<resource>`, access. */
export const SHAPES: [RouteKind, Method, string, Access][] = [
  ['list', 'GET', '', 'reader'],
  ['create', 'POST', '', 'writer'],
  ['read', 'GET', '/{id}', 'reader'],
  ['replace', 'PUT', '/{id}', 'writer'],
  ['patch', 'PATCH', '/{id}', 'writer'],
  ['delete', 'DELETE', '/{id}', 'writer'],
  ['history', 'GET', '/{id}/history', 'reader'],
  ['revert', 'POST', '/{id}/revert', 'writer'],
];

/** Where a resource's entries are served: `/fr/api/config/<name>`, or `/fr/api/<name>` for an admins' resource. */
export const entriesPath = (resource: ResourceName): string =>
  resourceOf(resource).declaration.scope === 'admin' ? `${API_BASE}/${resource}` : `${CONFIG_BASE}/${resource}`;

/** The access of a route of `resource`: its shape's, or admin for every route of an admins' resource. */
export const accessOf = (resource: ResourceName, access: Access): Access =>
  resourceOf(resource).declaration.scope === 'admin' ? 'admin' : access;

export const ROUTES: RouteDescriptor[] = RESOURCE_NAMES.flatMap((resource) =>
  SHAPES.map(([kind, method, suffix, access]) => ({
    kind,
    method,
    resource,
    access: accessOf(resource, access),
    path: `${entriesPath(resource)}${suffix}`,
  })),
);

export const TOKENS_PATH = `${API_BASE}/tokens`;

export const API_ROUTES: ApiRouteDescriptor[] = [
  { kind: 'changes', method: 'GET', path: `${API_BASE}/changes`, access: 'reader' },
  { kind: 'changeStream', method: 'GET', path: `${API_BASE}/changes/stream`, access: 'reader' },
  { kind: 'diff', method: 'GET', path: `${API_BASE}/diff`, access: 'reader' },
  { kind: 'export', method: 'GET', path: `${API_BASE}/export`, access: 'reader' },
  { kind: 'import', method: 'POST', path: `${API_BASE}/import`, access: 'admin' },
  { kind: 'whoami', method: 'GET', path: `${API_BASE}/whoami`, access: 'identified' },
  { kind: 'listTokens', method: 'GET', path: TOKENS_PATH, access: 'admin' },
  { kind: 'issueToken', method: 'POST', path: TOKENS_PATH, access: 'admin' },
  { kind: 'revokeToken', method: 'DELETE', path: `${TOKENS_PATH}/{id}`, access: 'admin' },
  // The secrets of one entry in plain text, for each configuration resource that declares a secret
  // field (an event rule's signing key is write-only: never revealed).
  ...CONFIGURATION_NAMES.filter((resource) => resourceOf(resource).secretFields.length > 0).map(
    (resource): ApiRouteDescriptor => ({
      kind: 'secret',
      method: 'GET',
      path: `${entriesPath(resource)}/{id}/secret`,
      access: 'secrets',
      resource,
    }),
  ),
];

/** The routes about the service itself: listed after every route module's (see http/route-module.ts). */
export const SERVICE_ROUTES: ApiRouteDescriptor[] = [
  { kind: 'openApi', method: 'GET', path: OPENAPI_PATH, access: 'open' },
  { kind: 'healthz', method: 'GET', path: '/healthz', access: 'open' },
  { kind: 'readyz', method: 'GET', path: '/readyz', access: 'open' },
  { kind: 'metrics', method: 'GET', path: '/metrics', access: 'open' },
  { kind: 'docs', method: 'GET', path: `${API_BASE}/docs`, access: 'open' },
  { kind: 'docsAsset', method: 'GET', path: `${API_BASE}/docs/assets/{file}`, access: 'open' },
];

/** Methods answered on a path: HEAD wherever GET is, OPTIONS everywhere. */
export function allowedMethods(methods: Method[]): string[] {
  return [...(methods.includes('GET') ? ['GET', 'HEAD'] : []), ...methods.filter((m) => m !== 'GET'), 'OPTIONS'];
}
