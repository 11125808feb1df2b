import type { Caller, ConfigService } from '../application/service.js';
import type { WriteRequest } from '../application/writes.js';
import { DomainError } from '../domain/shared/errors.js';
import type { EntryRecord } from '../engine/table.js';
import { basesOf, mergedEntries } from './lookups.js';
import { fieldsOf, type Resolve } from './merge.js';
import { freshOverlay, overlayOf } from './overlay.js';
import { changeSetOf, type Decide, stagedWrites } from './staged.js';
import { stage } from './staging.js';
import { closed, expectState, merged, opened, reverted } from './steps.js';

/**
 * What the change sets' routes do with the service: each step read from the state and the change log,
 * decided on the state in the group commit, recorded in one append.
 */

const at = (service: ConfigService) => service.now().toISOString();
const depsOf = (service: ConfigService) => ({
  decide: ((request, state) => service.write.decided(request, state)) as Decide,
  open: (sealed: string) => service.openSecret(sealed),
});

/** A change set as the API shows it, with how many writes it holds. */
export function presentChangeSet(service: ConfigService, entry: EntryRecord) {
  const staged = service.state.collections['change-set-operations'].referencing('change_set', entry.id).size;
  return {
    id: entry.id,
    name: entry.name,
    description: entry.description,
    state: entry.state,
    base: entry.base,
    created_by: entry.created_by,
    staged,
    merge_request_id: entry.merge_request_id,
    merged_by: entry.merged_by,
    revert_request_id: entry.revert_request_id,
    created_at: entry.created_at,
    updated_at: entry.updated_at,
    version: entry.version,
  };
}

const answer = (service: ConfigService, id: number) => () => ({
  change_set: presentChangeSet(service, changeSetOf(service.state, id)),
});

export function open(service: ConfigService, caller: Caller, fields: { name: string; description: string | null }) {
  let id = 0;
  return service.write.record(
    caller,
    (state) => {
      const events = opened(state, { ...fields, by: caller.actor });
      id = events[0].data.id as number;
      return { events };
    },
    () => answer(service, id)(),
  );
}

/** Stages writes (all or none): what each leaves of its entry. */
export async function stageAll(service: ConfigService, id: number, writes: WriteRequest[], caller: Caller) {
  for (const write of writes) await service.write.prove(write);
  const deps = { ...depsOf(service), at: at(service) };
  let staged: ReturnType<typeof stage>['results'] = [];
  await service.write.record(
    { ...caller, changeSet: id },
    (state) => {
      const { events, results } = stage(state, id, writes, { ...deps, seal: (plain) => service.write.seal(plain) });
      staged = results;
      return { events };
    },
    () => undefined,
  );
  return staged;
}

/** Each field a change set changes: at base, in it, now; conflicts marked; the writes refused now. */
export async function diff(service: ConfigService, id: number) {
  const entry = changeSetOf(service.state, id);
  const deps = { ...depsOf(service), at: at(service) };
  const first = freshOverlay(service.state, id, deps);
  const bases = await basesOf(service, entry.base as number, first.touched);
  // Decided again now, every staged write: what changed meanwhile shows (a write refused since).
  const overlay = freshOverlay(service.state, id, deps);
  const requests = stagedWrites(service.state, deps.open, id);
  return {
    change_set: presentChangeSet(service, changeSetOf(service.state, id)),
    fields: fieldsOf(service.state, overlay.touched, bases),
    refused: overlay.failures.map(({ index, error }) => ({
      operation: index,
      write: `${requests[index].kind} ${requests[index].resource}`,
      status: error instanceof DomainError ? error.status : 500,
      code: error instanceof DomainError ? error.code : 'internal',
      detail: error.message,
    })),
  };
}

/** The merge: one append, every event carrying the change set's id; an approval if a policy says so. */
export async function merge(service: ConfigService, id: number, resolve: Resolve, caller: Caller) {
  const entry = changeSetOf(service.state, id);
  expectState(entry, 'open');
  const deps = { ...depsOf(service), at: at(service) };
  const overlay = overlayOf(service.state, id, deps);
  const bases = await basesOf(service, entry.base as number, overlay.touched);
  const ask = { staged: overlay.staged, bases, resolve, requestId: caller.requestId, actor: caller.actor };
  const request = { kind: 'change-set-merge', id, resolve };
  return service.write.record(
    { ...caller, changeSet: id },
    (state) => ({ events: merged(state, id, ask, { ...deps, at: at(service) }) }),
    answer(service, id),
    { operation: 'change-set-merge', request },
  );
}

/** A merged change set undone as one append. */
export async function revert(service: ConfigService, id: number, resolve: Resolve, caller: Caller) {
  const entry = changeSetOf(service.state, id);
  expectState(entry, 'merged');
  const entries = await mergedEntries(service, entry.merge_request_id as string);
  const ask = { entries, resolve, requestId: caller.requestId };
  return service.write.record(
    { ...caller, changeSet: id },
    (state) => ({ events: reverted(state, id, ask, { ...depsOf(service), at: at(service) }) }),
    answer(service, id),
  );
}

export function close(service: ConfigService, id: number, caller: Caller) {
  return service.write.record(caller, (state) => ({ events: closed(state, id) }), answer(service, id));
}
