/** The largest id: ids are JSON numbers, exact up to 2^53 − 1. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A domain event as deciders produce it: a past-tense type and flat JSON-safe data. */
export interface DomainEvent<T extends string = string, D = Record<string, unknown>> {
  type: T;
  data: D;
}

/**
 * The one stream holding the whole configuration: one consistency boundary (see docs/design.md).
 * Every store keeps it under this name, and every leaf of the verifiable log names it.
 */
export const CONFIG_STREAM = 'pmacontrol-config';

/** The shape of events written by this version; older events are upcast to it before the fold. */
export const EVENT_SCHEMA = 2;

/** Who caused an event and when; stored beside the data, never inside it. */
export interface EventMetadata {
  actor: string;
  request_id: string;
  at: string;
  /** The entry's stream name in EventStoreDB category form, e.g. `sshKey-12`; absent for events about no entry. */
  entry?: string;
  /** The event schema version it was written with; absent before version 2. */
  schema?: number;
  /** On every event an approved request caused when it was executed: the approval's id. */
  approval?: number;
  /** On every event a change set's staging or merge recorded: its id. */
  change_set?: number;
  /** On the last event of a request sent with an Idempotency-Key: the key, and its sealed answer. */
  idempotency?: { key: string; fingerprint: string; response: string };
}

/** An event as the fold reads it: its place in the log and its metadata. */
export interface LoggedEvent extends DomainEvent {
  /** 0-based revision in the configuration stream; the API's position is `revision + 1`. */
  revision: number;
  metadata: EventMetadata;
}

/**
 * The versions a write accepts (from `If-Match`): `any` (`*`), or a list. Undefined: no condition.
 */
export type ExpectedVersion = 'any' | readonly number[];
