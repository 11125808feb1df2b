import type { Context } from 'koa';
import type { WriteRequestOf } from '../../application/prepare.js';
import type { WriteResult } from '../../application/service.js';
import { type ResourceName, resourceOf } from '../../domain/resources.js';
import { type FieldError, ValidationFailed } from '../../domain/shared/errors.js';
import type { EntryRecord } from '../../engine/table.js';
import { readJson } from '../body.js';
import { aroundItem, etag } from '../entry-read.js';
import { entryJson } from '../list-body.js';
import { expectedVersion, parseId, refuseQuery } from '../request.js';
import { callerOf, jsonResponse, write } from '../writes.js';
import type { HandlerDeps } from './descriptors.js';
import { CONFIG_BASE } from './descriptors.js';

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

export async function create<R extends ResourceName>(ctx: Context, resource: R, deps: HandlerDeps) {
  refuseQuery(ctx);
  const { value, raw } = await readJson(ctx);
  const { id, input } = deps.validator.parse(resource, 'create', value);
  await run(ctx, deps, raw, { kind: 'create', resource, id, input }, (result) =>
    jsonResponse(201, writtenBody(resource, { id: result.id, resource }, result.entry!), {
      Location: `${CONFIG_BASE}/${resource}/${result.id}`,
      ETag: etag(result.entry!),
    }),
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
