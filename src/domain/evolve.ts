import { entryOf, stamped } from '../engine/entries.js';
import type { Journal } from '../engine/journal.js';
import { COLLECTION_NAMES, type CollectionName, collectionOf, referencesTo } from './resources.js';
import type { Resource } from './shared/declaration.js';
import { type Apply, change, type Effect, existing, FoldError, idOf, nextRevision } from './shared/effects.js';
import type { LoggedEvent } from './shared/types.js';
import type { ConfigState } from './state.js';
import { upcast } from './upcast.js';

function created(resource: Resource): Apply {
  return (state, event, journal) => {
    const col = state.collections[resource.name as CollectionName];
    const id = idOf(event);
    if (col.get(id) || col.tombstone(id))
      throw new FoldError(`${event.type} for ${resource.name}/${id}, which already exists`);
    const { at } = event.metadata;
    const soft = resource.declaration.deletion === 'soft' ? { is_deleted: false } : {};
    const entry = entryOf(event.data, soft, { version: 1, created_at: at, updated_at: at });
    return [change(col, id, entry, journal)];
  };
}

function updated(resource: Resource): Apply {
  return (state, event, journal) => {
    const col = state.collections[resource.name as CollectionName];
    const changes = event.data.changes as Record<string, unknown>;
    return [change(col, idOf(event), stamped(existing(col, event), changes, event.metadata.at), journal)];
  };
}

/** A soft delete flags the entry; a hard delete removes it and changes the entries that referenced it. */
function deleted(resource: Resource): Apply {
  return (state, event, journal) => {
    const col = state.collections[resource.name as CollectionName];
    const entry = existing(col, event);
    if (resource.declaration.deletion === 'soft') {
      return [change(col, entry.id, stamped(entry, { is_deleted: true }, event.metadata.at), journal)];
    }
    const own = change(col, entry.id, undefined, journal);
    // Before event schema 2, those changes were recorded as events of their own (see upcast.ts).
    const derived = event.data.cascade === 'recorded' ? [] : cascade(state, resource, entry.id, event, journal);
    return [own, ...derived];
  };
}

/** What deleting `target/id` does to the entries that reference it, as their declarations say. */
function cascade(state: ConfigState, target: Resource, id: number, event: LoggedEvent, journal?: Journal): Effect[] {
  const effects: Effect[] = [];
  for (const link of referencesTo(target.name as CollectionName)) {
    const col = state.collections[link.from as CollectionName];
    const policy = link.reference.whenTargetDeleted;
    for (const referrer of [...col.referencing(link.field, id)].sort((a, b) => a - b)) {
      const entry = col.get(referrer)!;
      let value: unknown;
      if (policy === 'remove') value = (entry[link.field] as number[]).filter((held) => held !== id);
      else if (policy !== 'refuse' && entry.is_deleted && typeof policy.softDeleted === 'object') {
        value = policy.softDeleted.moveTo;
      } else continue;
      effects.push(change(col, referrer, stamped(entry, { [link.field]: value }, event.metadata.at), journal));
    }
  }
  return effects;
}

function restored(resource: Resource): Apply {
  return (state, event, journal) => {
    const col = state.collections[resource.name as CollectionName];
    return [change(col, idOf(event), stamped(existing(col, event), { is_deleted: false }, event.metadata.at), journal)];
  };
}

/** The entry becomes what it was at `to_version`, also after a hard delete; its version counts on. */
function reverted(resource: Resource): Apply {
  return (state, event, journal) => {
    const col = state.collections[resource.name as CollectionName];
    const id = idOf(event);
    const current = col.get(id);
    const tombstone = col.tombstone(id);
    if (!current && !tombstone) throw new FoldError(`${event.type} for ${resource.name}/${id}, which never existed`);
    const { at } = event.metadata;
    const version = nextRevision(col, id) + 1;
    const createdAt = current?.created_at ?? tombstone!.created_at;
    const values = event.data.values as Record<string, unknown>;
    const entry = entryOf({ id }, values, { version, created_at: createdAt, updated_at: at });
    return [change(col, id, entry, journal)];
  };
}

function secretKeyRecorded(state: ConfigState, event: LoggedEvent, journal?: Journal): Effect[] {
  const previous = state.secretKey;
  journal?.record(() => (state.secretKey = previous));
  state.secretKey = { fingerprint: event.data.fingerprint as string, at: event.metadata.at };
  return [];
}

/** The log's signing key, its public half recorded (data: verifier_key); a new one replaces it. */
function logKeyRecorded(state: ConfigState, event: LoggedEvent, journal?: Journal): Effect[] {
  const previous = state.logKey;
  journal?.record(() => (state.logKey = previous));
  state.logKey = { verifierKey: event.data.verifier_key as string, at: event.metadata.at };
  return [];
}

/**
 * A key rotation re-sealed an entry's secrets under the new key (data: resource, id, values). The
 * entry's values are the same secrets: its version and updated_at do not move.
 */
function secretsResealed(state: ConfigState, event: LoggedEvent, journal?: Journal): Effect[] {
  const col = state.collections[event.data.resource as CollectionName];
  const entry = existing(col, event);
  return [change(col, entry.id, entryOf(entry, event.data.values as Record<string, unknown>), journal)];
}

export type { Effect } from './shared/effects.js';

/** Every event type and what it does: events are routed by this table, never by parsing their names. */
const TABLE = new Map<string, Apply>([
  ['SecretKeyRecorded', secretKeyRecorded],
  ['LogKeyRecorded', logKeyRecorded],
  // A request that changed nothing, kept for its Idempotency-Key (in its metadata): no effect on the state.
  ['RequestRecorded', () => []],
  // Someone read a secret (data: resource, id, field; never the value): in the log for the audit, no effect.
  ['SecretRevealed', () => []],
  // A dry-run import compared the secrets it was sent with these entries' (data: entries): audit only.
  ['SecretsCompared', () => []],
  ['SecretsResealed', secretsResealed],
  // A break-glass token passed a policy alone (data: operation, resource, id, reason, policies): audit only.
  ['BreakGlassUsed', () => []],
]);
const RESOURCE_OF_EVENT = new Map<string, CollectionName>();
for (const name of COLLECTION_NAMES) {
  const resource = collectionOf(name);
  const { events } = resource;
  const handlers: [string, Apply][] = [
    [events.created, created(resource)],
    [events.updated, updated(resource)],
    [events.deleted, deleted(resource)],
    [events.reverted, reverted(resource)],
  ];
  if (resource.declaration.deletion === 'soft') handlers.push([events.restored, restored(resource)]);
  for (const type of resource.declaration.updateEvents ?? []) handlers.push([type, updated(resource)]);
  for (const [type, apply] of handlers) {
    TABLE.set(type, apply);
    RESOURCE_OF_EVENT.set(type, name);
  }
}

/** The collection whose entry an event is about (its `data.id`), or undefined for events about no entry. */
export const resourceOfEvent = (type: string): CollectionName | undefined => RESOURCE_OF_EVENT.get(type);

/**
 * Folds one event into the state (upcast first) and says which entries it changed. With a journal,
 * every change can be undone. An event the state cannot take (an unknown type, a creation over an
 * existing entry, a change of a missing one) throws: the log and the state would disagree.
 */
export function evolve(state: ConfigState, event: LoggedEvent, journal?: Journal): Effect[] {
  const current = upcast(event);
  const apply = TABLE.get(current.type);
  if (!apply) throw new FoldError(`unknown event type ${current.type}`);
  if (current.revision !== state.revision + 1) {
    throw new FoldError(`event ${current.revision} does not follow revision ${state.revision}`);
  }
  const effects = apply(state, current, journal);
  const revision = state.revision;
  if (journal) journal.record(() => (state.revision = revision));
  state.revision = current.revision;
  return effects;
}
