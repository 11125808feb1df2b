import type { ConfigService, ParseWrite } from '../application/service.js';
import type { WriteRequest } from '../application/writes.js';
import { isConfigurationName, type ResourceName } from '../domain/resources.js';
import { DomainError, type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import { expectedVersion } from '../http/route-module.js';

/** The most writes one request stages. */
export const MAX_OPERATIONS = 5000;

const PATH = /^\/fr\/api\/config\/([a-z-]+)(?:\/([1-9][0-9]{0,15})(\/revert)?)?\/?$/;

interface Operation {
  method?: unknown;
  path?: unknown;
  body?: unknown;
  if_match?: unknown;
}

type Kind = 'create' | 'replace' | 'patch' | 'delete' | 'revert';

/** Which write a method and path are, or why not. */
function kindOf(method: string, id: string | undefined, revert: boolean): Kind | string {
  if (revert) return method === 'POST' ? 'revert' : 'a revert is POST …/{id}/revert';
  if (id === undefined) return method === 'POST' ? 'create' : `${method} needs an entry's path (…/{id})`;
  const kinds: Record<string, Kind> = { PUT: 'replace', PATCH: 'patch', DELETE: 'delete' };
  return kinds[method] ?? `${method} of an entry is not a write (PUT, PATCH, DELETE; POST …/revert)`;
}

const objectOf = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** One operation as the write it is (a revert with the values of its version, read from the change log). */
async function writeOf(op: Operation, at: string, service: ConfigService, parse: ParseWrite): Promise<WriteRequest> {
  const fail = (field: string, message: string) =>
    new ValidationFailed([{ field: `${at}.${field}`, code: 'invalid_value', message }]);
  const match = typeof op.path === 'string' ? PATH.exec(op.path) : null;
  if (!match || !isConfigurationName(match[1]))
    throw fail('path', 'must be a path of a configuration entry or list, under /fr/api/config');
  const resource = match[1] as ResourceName;
  const id = match[2] === undefined ? undefined : Number(match[2]);
  const kind = kindOf(String(op.method ?? '').toUpperCase(), match[2], match[3] !== undefined);
  if (!['create', 'replace', 'patch', 'delete', 'revert'].includes(kind)) throw fail('method', kind);
  const expected = typeof op.if_match === 'string' ? expectedVersion(op.if_match) : undefined;
  const body = objectOf(op.body ?? (kind === 'delete' ? {} : undefined));
  if (!body) throw fail('body', 'must be a JSON object');
  if (kind === 'delete') return { kind, resource, id: id!, expected } as WriteRequest;
  if (kind === 'revert') {
    const version = body.version;
    if (!Number.isSafeInteger(version) || (version as number) < 1)
      throw fail('body.version', 'must be a version number, an integer from 1');
    const values = await service.changes.versionOf(resource, id!, version as number);
    return { kind, resource, id: id!, toVersion: version, values, expected } as WriteRequest;
  }
  try {
    const input = parse(resource, kind as 'create' | 'replace' | 'patch', body);
    return (kind === 'create' ? { kind, resource, input } : { kind, resource, id, input, expected }) as WriteRequest;
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    throw new ValidationFailed(error.errors.map((e: FieldError) => ({ ...e, field: `${at}.body.${e.field}` })));
  }
}

/** `{"operations": [{method, path, body?, if_match?}, …]}`: up to MAX_OPERATIONS writes, each checked as its route would. */
export async function writesOf(body: Record<string, unknown>, service: ConfigService, parse: ParseWrite) {
  const unknown = Object.keys(body).filter((key) => key !== 'operations');
  if (unknown.length > 0)
    throw new ValidationFailed([{ field: unknown[0], code: 'unknown_field', message: 'only operations' }]);
  const operations = body.operations;
  if (!Array.isArray(operations) || operations.length === 0)
    throw new ValidationFailed([{ field: 'operations', code: 'required', message: 'a list of at least one write' }]);
  if (operations.length > MAX_OPERATIONS)
    throw new DomainError(413, 'payload_too_large', `at most ${MAX_OPERATIONS} operations in one request`);
  const writes: WriteRequest[] = [];
  for (const [index, op] of operations.entries()) {
    const at = `operations[${index}]`;
    const one = objectOf(op);
    if (!one) throw new ValidationFailed([{ field: at, code: 'invalid_type', message: 'must be an object' }]);
    writes.push(await writeOf(one, at, service, parse));
  }
  return writes;
}
