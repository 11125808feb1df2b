import { type AliasEvent, evolve as evolveAlias } from '../src/domain/aliases/events.js';
import { type ClientEvent, evolve as evolveClient } from '../src/domain/clients/events.js';
import { type EnvironmentEvent, evolve as evolveEnvironment } from '../src/domain/environments/events.js';
import { evolve as evolveServer, type ServerEvent } from '../src/domain/servers/events.js';
import type { Collection, EntryMeta, Resource } from '../src/domain/shared/types.js';
import { evolve as evolveSshKey, type SshKeyEvent } from '../src/domain/ssh-keys/events.js';
import { type ConfigEvent, type ConfigState, resourceOfEvent } from '../src/domain/state.js';
import { evolve as evolveStorageArea, type StorageAreaEvent } from '../src/domain/storage-areas/events.js';
import { evolve as evolveTag, type TagEvent } from '../src/domain/tags/events.js';

/**
 * The configuration read model: every entry of every resource, plus deleted ids and the highest id
 * used. GET routes serve it and deciders read it. A pure fold: the same events give the same model.
 */
export interface Touched {
  resource: Resource;
  id: number;
  /** The entry's version before the event (0 when the event creates it): its revision in the entry stream. */
  revision: number;
}

function fold<E extends EntryMeta, V extends { type: string; data: { id: number } }>(
  resource: Resource,
  col: Collection<E>,
  evolve: (entry: E | undefined, event: V, at: string) => E | undefined,
  event: V,
  at: string,
): Touched {
  const id = event.data.id;
  const before = col.entries.get(id);
  // A creation never replaces an entry, nor takes a deleted id: the log and the fold would disagree.
  if (event.type.endsWith('Created') && (before || col.deleted.has(id))) {
    throw new Error(`${event.type} for ${resource}/${id}, which already exists`);
  }
  const after = evolve(before, event, at);
  if (after) col.entries.set(id, after);
  else {
    col.entries.delete(id);
    col.deleted.add(id);
  }
  col.lastId = Math.max(col.lastId, id);
  return { resource, id, revision: before?.version ?? 0 };
}

/** Applies one event; returns the entry it touched, or undefined for an event about no entry. */
export function project(state: ConfigState, event: ConfigEvent, at: string): Touched | undefined {
  if (event.type === 'SecretKeyRecorded') {
    state.secretKey = { fingerprint: event.data.fingerprint, at };
    return undefined;
  }
  const resource = resourceOfEvent(event.type);
  switch (resource) {
    case 'tags':
      return fold(resource, state.tags, evolveTag, event as TagEvent, at);
    case 'clients':
      return fold(resource, state.clients, evolveClient, event as ClientEvent, at);
    case 'environments':
      return fold(resource, state.environments, evolveEnvironment, event as EnvironmentEvent, at);
    case 'aliases':
      return fold(resource, state.aliases, evolveAlias, event as AliasEvent, at);
    case 'storage-areas':
      return fold(resource, state['storage-areas'], evolveStorageArea, event as StorageAreaEvent, at);
    case 'servers':
      return fold(resource, state.servers, evolveServer, event as ServerEvent, at);
    case 'ssh-keys':
      return fold(resource, state['ssh-keys'], evolveSshKey, event as SshKeyEvent, at);
    case undefined:
      throw new Error(`unknown event type ${event.type}`);
  }
}
