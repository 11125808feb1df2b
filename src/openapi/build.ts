import {
  type OpenAPIObject,
  OpenApiBuilder,
  type OperationObject,
  type ResponsesObject,
  type SchemaObject,
  type SecurityRequirementObject,
  type TagObject,
} from 'openapi3-ts/oas31';
import { RESOURCE_NAMES, resourceOf } from '../domain/resources.js';
import type { Access } from '../http/identity.js';
import type { RouteModule } from '../http/route-module.js';
import { API_ROUTES, ROUTES, SERVICE_ROUTES } from '../http/routes/descriptors.js';
import { apiOperation } from './api-operations.js';
import { APPROVAL_SCHEMA } from './approval.js';
import { sharedComponents } from './components.js';
import { configOperation } from './config-operations.js';
import { describeProperties } from './descriptions.js';
import { documentedEntrySchema, documentedWriteSchema } from './examples.js';
import { TOKEN_SCHEMA } from './identity-operations.js';
import { problems } from './operation-kit.js';

const DESCRIPTION = [
  'Inventory of a MariaDB/MySQL monitoring platform. Every accepted write is stored as a domain event; reads',
  'are served by projections of that log.',
  '',
  'On every path: HEAD wherever GET is; OPTIONS answers 204 with `Allow`; any other method is a 405',
  '`method_not_allowed` problem with `Allow`. A trailing slash is accepted. Every response carries',
  '`X-Request-ID`. Errors are `application/problem+json` with `code` and `error` (= `detail`); 500 `internal`',
  'is never the answer to client input. A `Host` the service does not answer to is a 421 `misdirected_request`',
  '(DNS rebinding): by default the listen address, `localhost`, `127.0.0.1` and `[::1]` (any IP address when it',
  'listens on `0.0.0.0`), plus the names ALLOWED_HOSTS lists.',
  '',
  'Authentication: `Authorization: Bearer <token>` (tokens: `pmc_` and 43 characters, issued by an admin). The',
  "token's name is the actor recorded on every event its requests cause. Without a token the caller is",
  '`anonymous`, with the role ANONYMOUS_ROLE gives it (by default writer when the service listens on a loopback',
  'address only, reader otherwise); a bad token is a 401, never anonymous. Roles: reader (every GET),',
  'writer (+ configuration writes, revert), admin (+ tokens, import).',
].join('\n');

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The core's routes an approval policy may hold (section 16): they may answer 202 with the approval. */
const GATED_KINDS = new Set(['create', 'replace', 'patch', 'delete', 'revert', 'secret', 'issueToken', 'import']);

/** The configuration's routes that take Change-Set: their writes are staged, their reads show a change set applied. */
const CHANGE_SET_KINDS = new Set(['list', 'read', 'create', 'replace', 'patch', 'delete', 'revert']);

/** A gated route's 202 and its headers: break glass, and Change-Set for the configuration's routes. */
function gated(route: { kind: string; path: string }, operation: OperationObject): OperationObject {
  const { kind } = route;
  const parameters = [...(operation.parameters ?? [])];
  if (CHANGE_SET_KINDS.has(kind) && route.path.startsWith('/fr/api/config/'))
    parameters.push({ $ref: '#/components/parameters/ChangeSet' });
  if (!GATED_KINDS.has(kind)) return { ...operation, parameters };
  parameters.push({ $ref: '#/components/parameters/BreakGlassReason' });
  return {
    ...operation,
    parameters,
    responses: { 202: { $ref: '#/components/responses/Held' }, ...operation.responses },
  };
}

/**
 * What a route's access adds to its operation: who may call it (a bearer token, or anonymous with a
 * role enough), its 401 and 403, and the Idempotency-Key of writes.
 */
function secured(operation: OperationObject, access: Access, method: string, basic = false): OperationObject {
  if (access === 'open') return { ...operation, security: [] };
  // Any route of the API may need the event store, or the stored read models being rebuilt: 503.
  const refusals = problems('Unauthorized', ...(access === 'identified' ? [] : ['Forbidden']), 'Unavailable');
  const responses: ResponsesObject = { ...operation.responses, ...refusals };
  const parameters = [...(operation.parameters ?? [])];
  if (WRITES.has(method)) {
    const key = { $ref: '#/components/parameters/IdempotencyKey' };
    if (!parameters.some((p) => '$ref' in p && p.$ref === key.$ref)) parameters.push(key);
    for (const [status, response] of Object.entries(responses)) {
      if (!status.startsWith('2') || '$ref' in response) continue;
      const replayed = { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } };
      responses[status] = { ...response, headers: { ...response.headers, ...replayed } };
    }
  }
  const schemes: SecurityRequirementObject[] = basic ? [{ bearer: [] }, { basic: [] }, {}] : [{ bearer: [] }, {}];
  return { ...operation, parameters, responses, security: schemes };
}

/**
 * The tags of the core's routes that are not a resource's: these first, then each route module's,
 * then `meta` (the API itself) last.
 */
const TAGS: TagObject[] = [
  { name: 'audit', description: 'The change log, time travel, differences and the live feed' },
  { name: 'identity', description: 'Who is asking: tokens, roles' },
  { name: 'transfer', description: 'The whole configuration as one document: export and import' },
  { name: 'operations', description: 'Health, readiness and metrics, for the platform that runs the service' },
];
const META_TAG: TagObject = { name: 'meta', description: 'The API itself' };

/**
 * The OpenAPI 3.1 document, built from the same route descriptors and resource declarations the
 * service runs on: the configuration routes, the core's own, each route module's (the wings', in the
 * order given), then the routes about the service itself.
 */
export function buildOpenApi(version: string, modules: readonly RouteModule[] = []): OpenAPIObject {
  const builder = OpenApiBuilder.create({
    openapi: '3.1.0',
    info: {
      title: 'PmaControl configuration API',
      version,
      description: DESCRIPTION,
      license: { name: 'GPL-3.0-or-later', identifier: 'GPL-3.0-or-later' },
      // Who answers for this API: the team that runs the instance (no address is invented here).
      contact: { name: 'the PmaControl configuration service maintainers (see the README)' },
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'the default local instance' }],
    // A bearer token, or none: what anonymous may do depends on ANONYMOUS_ROLE.
    security: [{ bearer: [] }, {}],
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
  const add = (
    route: { path: string; method: string; access: Access; basic?: boolean },
    operation: OperationObject,
  ) => {
    const done = secured(operation, route.access, route.method, route.basic);
    // Any route answers 421 to a Host the service does not answer to (DNS rebinding).
    done.responses = { ...done.responses, ...problems('MisdirectedRequest') };
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: done };
  };
  for (const route of ROUTES) add(route, gated(route, configOperation(route)));
  for (const route of API_ROUTES) add(route, gated(route, apiOperation(route)));
  for (const module of modules) for (const route of module.routes) add(route, module.operations[route.kind]());
  for (const route of SERVICE_ROUTES) add(route, apiOperation(route));
  builder.addSchema('Token', TOKEN_SCHEMA as SchemaObject);
  builder.addSchema('Approval', APPROVAL_SCHEMA);
  for (const [path, operations] of Object.entries(paths)) builder.addPath(path, operations);
  for (const tag of [...TAGS, ...modules.flatMap((module) => module.tags), META_TAG]) builder.addTag(tag);
  return describeProperties(builder.getSpec());
}
