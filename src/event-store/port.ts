/**
 * The event store port. Two adapters implement it for production (SQLite, EventStoreDB) and one for
 * unit tests (in-memory); all three pass test/event-store/contract.ts.
 *
 * Revisions count from 0 inside a stream. Positions are increasing numbers over the whole log.
 */
import type { LoggedEvent } from '../domain/shared/types.js';

export interface EventToAppend {
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
}

export interface RecordedEvent {
  stream: string;
  revision: number;
  position: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
}

/**
 * The log read in the order of its stored positions, by a reader that writes nothing (verify, a
 * backup): opened on any copy of a store, the service's own or one restored elsewhere.
 */
export interface LogReader {
  /** Where it reads, for messages (never with a password). */
  readonly name: string;
  /** Up to `maxCount` events after the stored position `after`, in position order (empty at the end). */
  read(after: number, maxCount: number): Promise<RecordedEvent[]>;
  close(): Promise<void>;
}

/** A stored event that cannot be read (its data or metadata is not JSON): named by its stored position. */
export class EventUnreadable extends Error {
  constructor(
    readonly position: number,
    cause: unknown,
  ) {
    super(`the event at position ${position} cannot be read: ${(cause as Error).message}`, { cause });
    this.name = 'EventUnreadable';
  }
}

/** An event as a store keeps it: its JSON columns as text. */
export interface EventRow {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

/** An event's JSON columns parsed, or EventUnreadable naming its position. */
export function parsedEvent(row: EventRow): RecordedEvent {
  try {
    const { position, stream, revision, type } = row;
    return { position, stream, revision, type, data: JSON.parse(row.data), metadata: JSON.parse(row.metadata) };
  } catch (error) {
    throw new EventUnreadable(row.position, error);
  }
}

/** A recorded event as the domain reads it: its metadata is the service's own (see EventMetadata). */
export const logged = (event: RecordedEvent): LoggedEvent => event as unknown as LoggedEvent;

/** A revision number: the revision of the stream's last event; `no_stream`: the stream must not exist yet. */
export type ExpectedRevision = number | 'no_stream' | 'any';

export interface AppendResult {
  /** Revision of the last event appended. */
  nextRevision: number;
}

export interface ReadStreamOptions {
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Only events strictly after this position. */
  after?: number;
  maxCount?: number;
}

export interface Subscription {
  close(): Promise<void>;
  /**
   * The subscriber already has every event before `revision` (it folded its own appends directly):
   * a store that reads on demand does not read those again. Optional: a pushing store ignores it.
   */
  skipTo?(revision: number): void;
}

/** Events of one stream from a revision on, in order: first those already stored, then new ones as they come. */
export type OnEvent = (event: RecordedEvent) => void;

/** Where the events go and how durably: for the start-up log, and for the tests that check it. */
export interface StoreDescription {
  store: string;
  /** A file, or hosts (never credentials). */
  location: string;
  /** When an append is acknowledged, as the store is configured right now. */
  durability: string;
}

/** An append in two steps: written now, on disk once `durable` resolves (it rejects with StoreUnavailable). */
export interface Committed {
  result: AppendResult;
  durable: Promise<void>;
}

export interface EventStore {
  readonly name: string;
  describe(): StoreDescription;
  append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult>;
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * The revision of the stream's last event (-1: none yet), as the store has it now: one cheap
   * question, asked before a refusal is answered (see GroupCommit) and by readiness.
   */
  head(stream: string): Promise<number>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribe(stream: string, fromRevision: number, onEvent: OnEvent, onError?: (error: Error) => void): Subscription;
  close(): Promise<void>;
}

export class WrongExpectedRevision extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** 'moved': another writer appended at the same time (the store saw the race, not the new head). */
    readonly actual: number | 'no_stream' | 'moved',
  ) {
    super(`stream ${stream} is at ${actual}, expected ${expected}`);
    this.name = 'WrongExpectedRevision';
  }
}

/**
 * The store cannot be reached or refused to work. Nothing was written, unless `outcome` is `unknown`:
 * an append's commit was sent and no answer came, and the store could not be asked since whether it
 * holds the events (a later read shows it; a retry with the same Idempotency-Key is safe).
 */
export class StoreUnavailable extends Error {
  readonly outcome: 'nothing_written' | 'unknown';

  constructor(message: string, options?: { cause?: unknown; outcome?: 'unknown' }) {
    super(message, options);
    this.name = 'StoreUnavailable';
    this.outcome = options?.outcome ?? 'nothing_written';
  }
}

export function checkExpected(stream: string, expected: ExpectedRevision, current: number | undefined): void {
  if (expected === 'any') return;
  const actual = current === undefined ? 'no_stream' : current;
  if (expected !== actual) throw new WrongExpectedRevision(stream, expected, actual);
}
