import type { Alias, AliasEvent } from './aliases/events.js';
import type { Client, ClientEvent } from './clients/events.js';
import type { Environment, EnvironmentEvent } from './environments/events.js';
import type { Server, ServerEvent } from './servers/events.js';
import type { Collection, DomainEvent, Resource } from './shared/types.js';
import { emptyCollection } from './shared/types.js';
import type { SshKey, SshKeyEvent } from './ssh-keys/events.js';
import type { StorageArea, StorageAreaEvent } from './storage-areas/events.js';
import type { Tag, TagEvent } from './tags/events.js';

/** The whole configuration: the state every decider reads, since its rules cross resources. */
export interface ConfigState {
  tags: Collection<Tag>;
  clients: Collection<Client>;
  environments: Collection<Environment>;
  aliases: Collection<Alias>;
  'storage-areas': Collection<StorageArea>;
  servers: Collection<Server>;
  'ssh-keys': Collection<SshKey>;
  /** The fingerprint of the key secrets are sealed under, as the log last recorded it. */
  secretKey?: { fingerprint: string; at: string };
}

/** Records which key the secrets are sealed under (never the key). */
export type SecretKeyRecorded = DomainEvent<'SecretKeyRecorded', { fingerprint: string }>;

export type ConfigEvent =
  | SecretKeyRecorded
  | TagEvent
  | ClientEvent
  | EnvironmentEvent
  | AliasEvent
  | StorageAreaEvent
  | ServerEvent
  | SshKeyEvent;

export type AnyEntry = ConfigState[Resource] extends Collection<infer E> ? E : never;

export const emptyState = (): ConfigState => ({
  tags: emptyCollection(),
  clients: emptyCollection(),
  environments: emptyCollection(),
  aliases: emptyCollection(),
  'storage-areas': emptyCollection(),
  servers: emptyCollection(),
  'ssh-keys': emptyCollection(),
});

/** Event type prefix → resource, and resource → stream category (EventStoreDB style `sshKey-12`). */
export const EVENT_PREFIXES = {
  Tag: 'tags',
  Client: 'clients',
  Environment: 'environments',
  Alias: 'aliases',
  StorageArea: 'storage-areas',
  Server: 'servers',
  SshKey: 'ssh-keys',
} as const satisfies Record<string, Resource>;

export type EventPrefix = keyof typeof EVENT_PREFIXES;

export const prefixOf = (resource: Resource): EventPrefix =>
  (Object.keys(EVENT_PREFIXES) as EventPrefix[]).find((p) => EVENT_PREFIXES[p] === resource)!;

/** Which resource an event belongs to: its type is `<Prefix><PastTenseVerb>`. */
export function resourceOfEvent(type: string): Resource | undefined {
  const match = /^([A-Z][a-zA-Z]*?)(Created|Updated|Deleted|Restored)$/.exec(type);
  return match ? EVENT_PREFIXES[match[1] as EventPrefix] : undefined;
}

export const entryStream = (resource: Resource, id: number) => {
  const prefix = prefixOf(resource);
  return `${prefix[0].toLowerCase()}${prefix.slice(1)}-${id}`;
};
