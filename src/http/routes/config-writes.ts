import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { WriteRequestOf } from '../../application/prepare.js';
import type { WriteResult } from '../../application/service.js';
import { type ResourceName, resourceOf } from '../../domain/resources.js';
import { type FieldError, ValidationFailed } from '../../domain/shared/errors.js';
import type { FieldSpec } from '../../domain/shared/fields.js';
import type { EntryRecord } from '../../engine/table.js';
import { readJson } from '../body.js';
import { aroundItem, etag } from '../entry-read.js';
import { entryJson } from '../list-body.js';
import { expectedVersion, parseId, refuseQuery } from '../request.js';
import { callerOf, jsonResponse, write } from '../writes.js';
import type { HandlerDeps } from './descriptors.js';
import { entriesPath } from './descriptors.js';

const expected = (ctx: Context) => expectedVersion(ctx.get('If-Match'));

/**
 * A write's answer: the entry as written, from the cache if a read put it there, else made and not
 * kept. Most versions a write makes are replaced before anything reads them; keeping their JSON
 * kept a string and a weak-map entry per write alive into the old generation, whose collections
 * cost more the larger the inventory.
 */
function writtenBody(resource: ResourceName, head: object, entry: EntryRecord): string {
  return aroundItem(head, entryJson(resource, entry, false));
}

/** Runs a configuration write (with its Idempotency-Key, if any) and sends `respond(result)`. */
function run<R extends ResourceName>(
  ctx: Context,
  { service }: HandlerDeps,
  raw: string,
  request: WriteRequestOf<R>,
  respond: (result: WriteResult) => ReturnType<typeof jsonResponse>,
) {
  const caller = callerOf(ctx);
  return write(
    ctx,
    service,
    raw,
    {
      plain: () => service.write.execute(request, caller),
      once: (options) => service.write.execute(request, caller, options),
    },
    respond,
  );
}

/**
 * The secrets the service makes for a creation that leaves them out (an event rule's signing key):
 * each added to the input, and returned to be shown once.
 */
function madeSecrets(resource: ResourceName, input: Record<string, unknown>): Record<string, string> {
  const made: Record<string, string> = {};
  for (const field of resourceOf(resource).secretFields) {
    const how = (resourceOf(resource).declaration.fields[field] as FieldSpec).made;
    if (!how || input[field] !== undefined) continue;
    made[field] = how.prefix + randomBytes(how.bytes).toString('base64');
    input[field] = made[field];
  }
  return made;
}

/**
 * 201 with the entry; a secret the service made is shown in `made`, this once: a retry with the
 * same Idempotency-Key is answered without it (it is never kept).
 */
export async function create<R extends ResourceName>(ctx: Context, resource: R, deps: HandlerDeps) {
  refuseQuery(ctx);
  const { value, raw } = await readJson(ctx);
  const { id, input } = deps.validator.parse(resource, 'create', value);
  const made = madeSecrets(resource, input as Record<string, unknown>);
  const answer = (head: object) => (result: WriteResult) =>
    jsonResponse(201, writtenBody(resource, { id: result.id, resource, ...head }, result.entry!), {
      Location: `${entriesPath(resource)}/${result.id}`,
      ETag: etag(result.entry!),
    });
  const shown = Object.keys(made).length > 0 ? { made } : {};
  const caller = callerOf(ctx);
  const request = { kind: 'create', resource, id, input } as const;
  await write(
    ctx,
    deps.service,
    raw,
    {
      plain: () => deps.service.write.execute(request, caller),
      once: (options) => deps.service.write.execute(request, caller, options),
    },
    answer(shown),
    answer({}),
  );
}

export async function change<R extends ResourceName>(
  ctx: Context,
  resource: R,
  deps: HandlerDeps,
  kind: 'replace' | 'patch',
) {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  const { value, raw } = await readJson(ctx);
  const { input, restore } = deps.validator.parse(resource, kind, value, id);
  await run(ctx, deps, raw, { kind, resource, id, input, expected: expected(ctx), restore }, (result) =>
    jsonResponse(200, writtenBody(resource, { id, resource, updated: true, changed: result.changed }, result.entry!), {
      ETag: etag(result.entry!),
    }),
  );
}

export async function remove<R extends ResourceName>(ctx: Context, resource: R, deps: HandlerDeps) {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  const mode = resourceOf(resource).declaration.deletion;
  await run(ctx, deps, '', { kind: 'delete', resource, id, expected: expected(ctx) }, () =>
    jsonResponse(200, JSON.stringify({ id, resource, deleted: true, mode })),
  );
}

export async function revert<R extends ResourceName>(ctx: Context, resource: R, deps: HandlerDeps) {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  const { value, raw } = await readJson(ctx);
  const toVersion = parseRevertBody(value);
  await run(ctx, deps, raw, { kind: 'revert', resource, id, toVersion, expected: expected(ctx) }, (result) => {
    const note = result.notRestored?.length ? { references_not_restored: result.notRestored } : {};
    return jsonResponse(200, writtenBody(resource, { id, resource, reverted_to: toVersion, ...note }, result.entry!), {
      ETag: etag(result.entry!),
    });
  });
}

/** `{"version": n}`, nothing else. */
function parseRevertBody(body: Record<string, unknown>): number {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => key !== 'version')
    .map((field) => ({ field, code: 'unknown_field', message: 'is not a field of a revert' }));
  const version = body.version;
  if (!Number.isSafeInteger(version) || (version as number) < 1) {
    errors.unshift({ field: 'version', code: 'invalid_type', message: 'must be a version number, an integer from 1' });
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return version as number;
}
