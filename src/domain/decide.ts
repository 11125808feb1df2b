import { decide as decideAlias } from './aliases/decide.js';
import { decide as decideClient } from './clients/decide.js';
import { decide as decideEnvironment } from './environments/decide.js';
import { decide as decideServer, type ServerCommand } from './servers/decide.js';
import type { DomainEvent, EntryCommand, Resource } from './shared/types.js';
import { decide as decideSshKey } from './ssh-keys/decide.js';
import type { ConfigState } from './state.js';
import { decide as decideStorageArea } from './storage-areas/decide.js';
import { decide as decideTag } from './tags/decide.js';

/** A command for any resource, fields already checked against the resource's schema. */
export type AnyCommand = EntryCommand<Record<string, unknown>> | ServerCommand;

type Decider = (command: never, state: ConfigState) => DomainEvent[];

const DECIDERS: Record<Resource, Decider> = {
  tags: decideTag,
  clients: decideClient,
  environments: decideEnvironment,
  aliases: decideAlias,
  'storage-areas': decideStorageArea,
  servers: decideServer,
  'ssh-keys': decideSshKey,
};

export const decide = (resource: Resource, command: AnyCommand, state: ConfigState): DomainEvent[] =>
  (DECIDERS[resource] as (command: AnyCommand, state: ConfigState) => DomainEvent[])(command, state);
