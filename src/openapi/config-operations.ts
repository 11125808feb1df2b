import type { OperationObject } from 'openapi3-ts/oas31';
import { resourceOf } from '../domain/resources.js';
import type { RouteDescriptor } from '../http/routes/descriptors.js';
import { history, list, read } from './config-reads.js';
import { change, create, remove, revert } from './config-writes.js';

export function configOperation(route: RouteDescriptor): OperationObject {
  const resource = resourceOf(route.resource);
  switch (route.kind) {
    case 'list':
      return list(route, resource);
    case 'read':
      return read(route, resource);
    case 'create':
      return create(route, resource);
    case 'replace':
    case 'patch':
      return change(route, resource, route.kind);
    case 'delete':
      return remove(route, resource);
    case 'history':
      return history(route, resource);
    case 'revert':
      return revert(route, resource);
  }
}
