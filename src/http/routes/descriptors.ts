import { RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';

export const CONFIG_BASE = '/fr/api/config';
export const OPENAPI_PATH = '/fr/api/openApi';

export type RouteKind = 'list' | 'read' | 'create' | 'replace' | 'patch' | 'delete' | 'history';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One route: what the router mounts and what the OpenAPI builder documents. */
export interface RouteDescriptor {
  kind: RouteKind;
  method: Method;
  /** OpenAPI form: `/fr/api/config/tags/{id}`. */
  path: string;
  resource: ResourceName;
}

const SHAPES: [RouteKind, Method, string][] = [
  ['list', 'GET', ''],
  ['create', 'POST', ''],
  ['read', 'GET', '/{id}'],
  ['replace', 'PUT', '/{id}'],
  ['patch', 'PATCH', '/{id}'],
  ['delete', 'DELETE', '/{id}'],
  ['history', 'GET', '/{id}/history'],
];

export const ROUTES: RouteDescriptor[] = RESOURCE_NAMES.flatMap((resource) =>
  SHAPES.map(([kind, method, suffix]) => ({ kind, method, resource, path: `${CONFIG_BASE}/${resource}${suffix}` })),
);

/** Methods answered on a path: HEAD wherever GET is, OPTIONS everywhere. */
export function allowedMethods(methods: Method[]): string[] {
  return [...(methods.includes('GET') ? ['GET', 'HEAD'] : []), ...methods.filter((m) => m !== 'GET'), 'OPTIONS'];
}
