import { RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';

export const API_BASE = '/fr/api';
export const CONFIG_BASE = `${API_BASE}/config`;
export const OPENAPI_PATH = `${API_BASE}/openApi`;

export type RouteKind = 'list' | 'read' | 'create' | 'replace' | 'patch' | 'delete' | 'history' | 'revert';
export type ApiRouteKind = 'changes' | 'changeStream' | 'diff' | 'openApi';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One route of a configuration resource: what the router mounts and what the OpenAPI builder documents. */
export interface RouteDescriptor {
  kind: RouteKind;
  method: Method;
  /** OpenAPI form: `/fr/api/config/tags/{id}`. */
  path: string;
  resource: ResourceName;
}

/** One route about the whole configuration or the API itself. */
export interface ApiRouteDescriptor {
  kind: ApiRouteKind;
  method: Method;
  path: string;
}

const SHAPES: [RouteKind, Method, string][] = [
  ['list', 'GET', ''],
  ['create', 'POST', ''],
  ['read', 'GET', '/{id}'],
  ['replace', 'PUT', '/{id}'],
  ['patch', 'PATCH', '/{id}'],
  ['delete', 'DELETE', '/{id}'],
  ['history', 'GET', '/{id}/history'],
  ['revert', 'POST', '/{id}/revert'],
];

export const ROUTES: RouteDescriptor[] = RESOURCE_NAMES.flatMap((resource) =>
  SHAPES.map(([kind, method, suffix]) => ({ kind, method, resource, path: `${CONFIG_BASE}/${resource}${suffix}` })),
);

export const API_ROUTES: ApiRouteDescriptor[] = [
  { kind: 'changes', method: 'GET', path: `${API_BASE}/changes` },
  { kind: 'changeStream', method: 'GET', path: `${API_BASE}/changes/stream` },
  { kind: 'diff', method: 'GET', path: `${API_BASE}/diff` },
  { kind: 'openApi', method: 'GET', path: OPENAPI_PATH },
];

/** Methods answered on a path: HEAD wherever GET is, OPTIONS everywhere. */
export function allowedMethods(methods: Method[]): string[] {
  return [...(methods.includes('GET') ? ['GET', 'HEAD'] : []), ...methods.filter((m) => m !== 'GET'), 'OPTIONS'];
}
