import { type OpenAPIObject, OpenApiBuilder, type OperationObject } from 'openapi3-ts/oas31';
import { RESOURCE_NAMES, resourceOf } from '../domain/resources.js';
import { API_ROUTES, ROUTES } from '../http/routes/descriptors.js';
import { apiOperation } from './api-operations.js';
import { sharedComponents } from './components.js';
import { configOperation } from './config-operations.js';
import { documentedEntrySchema, documentedWriteSchema } from './examples.js';

const DESCRIPTION = [
  'Inventory of a MariaDB/MySQL monitoring platform. Every accepted write is stored as a domain event; reads',
  'are served by projections of that log.',
  '',
  'On every path: HEAD wherever GET is; OPTIONS answers 204 with `Allow`; any other method is a 405',
  '`method_not_allowed` problem with `Allow`. A trailing slash is accepted. Every response carries',
  '`X-Request-ID`. Errors are `application/problem+json` with `code` and `error` (= `detail`); 500 `internal`',
  'is never the answer to client input.',
  '',
  'Authentication: none yet; every request acts as `anonymous` (recorded as the event actor).',
].join('\n');

/** The OpenAPI 3.1 document, built from the same route descriptors and resource declarations the service runs on. */
export function buildOpenApi(version: string): OpenAPIObject {
  const builder = OpenApiBuilder.create({
    openapi: '3.1.0',
    info: {
      title: 'PmaControl configuration API',
      version,
      description: DESCRIPTION,
      license: { name: 'GPL-3.0-or-later', identifier: 'GPL-3.0-or-later' },
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'the default local instance' }],
    // No authentication yet: stated explicitly rather than left undefined.
    security: [],
    paths: {},
    components: sharedComponents(),
  });
  for (const name of RESOURCE_NAMES) {
    const resource = resourceOf(name);
    const { title, description } = resource.declaration;
    builder.addTag({ name, description });
    builder.addSchema(title, documentedEntrySchema(resource));
    for (const mode of ['create', 'replace', 'patch'] as const) {
      builder.addSchema(`${title}${mode[0].toUpperCase()}${mode.slice(1)}`, documentedWriteSchema(resource, mode));
    }
  }
  const paths: Record<string, Record<string, OperationObject>> = {};
  for (const route of ROUTES)
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: configOperation(route) };
  for (const route of API_ROUTES)
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: apiOperation(route) };
  for (const [path, operations] of Object.entries(paths)) builder.addPath(path, operations);
  builder.addTag({ name: 'audit', description: 'The change log, time travel, differences and the live feed' });
  builder.addTag({ name: 'meta', description: 'The API itself' });
  return builder.getSpec();
}
