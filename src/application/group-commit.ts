import { type Effect, evolve, resourceOfEvent } from '../domain/evolve.js';
import { collectionOf } from '../domain/resources.js';
import {
  CONFIG_STREAM,
  type DomainEvent,
  EVENT_SCHEMA,
  type EventMetadata,
  type LoggedEvent,
} from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import { Journal } from '../engine/journal.js';
import { type EventStore, type EventToAppend, StoreUnavailable, WrongExpectedRevision } from '../event-store/port.js';
import type { Projector } from './projector.js';

export interface Clock {
  now(): Date;
}

/** Who asked, for the events' metadata. */
export interface Caller {
  actor: string;
  requestId: string;
  /** The caller's role, for a client of the API: its writes pass the approval policies (WriteGate). */
  role?: string;
  /** A break-glass token's reason (X-Break-Glass-Reason): it may pass a policy alone, recorded. */
  breakGlass?: string;
  /** The approval this request executes: every event it causes carries its id. */
  approval?: number;
  /** The change set this request stages in (Change-Set) or merges: its events carry its id. */
  changeSet?: number;
}

/** One command waiting for its batch: decided against the state as the commands before it left it. */
export interface Job<T> {
  caller: Caller;
  /** Prepares and decides: the events to record, or a DomainError (a refusal). Pure but for sealing. */
  decide(state: ConfigState): DomainEvent[];
  /** The answer, read from the state right after this command's own events (before later ones). */
  answer(state: ConfigState, effects: Effect[]): T;
  /**
   * What to keep in the metadata of the command's last event (a RequestRecorded event when it has
   * none), for a retry with the same Idempotency-Key; undefined: nothing.
   */
  remember?(answer: T): EventMetadata['idempotency'];
}

interface Queued {
  job: Job<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Decided = { queued: Queued; records: EventToAppend[] } & ({ answer: unknown } | { refusal: unknown });

/** How many commands, and events, one append may carry at most (EventStoreDB refuses appends over 1 MiB). */
const MAX_COMMANDS = 256;
const MAX_EVENTS = 1000;
/** How often a batch is decided again when another instance appended first. */
const MAX_ATTEMPTS = 25;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Group commit. Commands wait in a queue while an append is in flight; then all the waiting ones are
 * decided one after another against the evolving state (each sees the ones before it), their events
 * go to the log in one append, and each command gets its own answer or refusal. A refused command
 * does not fail its neighbours. A batch whose append loses the expected revision to another instance
 * is decided again as a whole, on the newer state, after a short random pause.
 */
export class GroupCommit {
  private readonly queue: Queued[] = [];
  private draining = false;
  private running?: Promise<void>;

  constructor(
    private readonly store: EventStore,
    private readonly projector: Projector,
    private readonly clock: Clock,
  ) {}

  submit<T>(job: Job<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, resolve: resolve as (value: unknown) => void, reject });
      if (this.draining) return;
      this.draining = true;
      this.running = this.drain();
    });
  }

  /** Resolves once every command submitted so far has its answer. */
  async idle(): Promise<void> {
    while (this.draining) await this.running;
  }

  /**
   * Runs batches until the queue is empty. The last look at the queue and the mark that no drain runs
   * happen in one synchronous step: a command submitted in between would otherwise wait forever.
   */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // Let the requests that arrived meanwhile reach the queue: they join this batch (group commit).
        await new Promise<void>((resolve) => setImmediate(resolve));
        await this.run(this.take());
      }
    } finally {
      this.draining = false;
    }
  }

  private take(): Queued[] {
    return this.queue.splice(0, MAX_COMMANDS);
  }

  private async run(batch: Queued[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.projector.catchUp();
      } catch (error) {
        for (const queued of batch) queued.reject(error);
        return;
      }
      const decided = this.decideAll(batch);
      const records = decided.flatMap((d) => d.records);
      try {
        if (records.length > 0) await this.append(records);
      } catch (error) {
        if (error instanceof WrongExpectedRevision && attempt < MAX_ATTEMPTS) {
          if (attempt > 1) await pause(Math.random() * Math.min(100, 2 ** attempt));
          continue;
        }
        const failure =
          error instanceof WrongExpectedRevision ? new StoreUnavailable('too many concurrent writes') : error;
        for (const d of decided) d.queued.reject('refusal' in d ? d.refusal : failure);
        return;
      }
      for (const d of decided) 'refusal' in d ? d.queued.reject(d.refusal) : d.queued.resolve(d.answer);
      return;
    }
  }

  /** Decides every command on the state as the ones before it leave it, then undoes all of that (`journal` too). */
  private decideAll(batch: Queued[], journal = new Journal()): Decided[] {
    const state = this.projector.state;
    const decided: Decided[] = [];
    let events = 0;
    for (const queued of batch) {
      if (events >= MAX_EVENTS) {
        this.queue.unshift(...batch.slice(decided.length));
        break;
      }
      decided.push(this.decideOne(queued, state, journal));
      events += decided[decided.length - 1].records.length;
    }
    journal.rollback();
    batch.length = decided.length;
    return decided;
  }

  /** One command, applied to the state for the ones after it; a refusal leaves the state as it was. */
  private decideOne(queued: Queued, state: ConfigState, journal: Journal): Decided {
    const mark = journal.mark();
    try {
      const { job } = queued;
      const records = job.decide(state).map((event) => this.record(event, job.caller));
      const effects = records.flatMap((record) => evolve(state, this.logged(record, state.revision + 1), journal));
      const answer = job.answer(state, effects);
      const note = job.remember?.(answer);
      if (note) {
        if (records.length === 0) {
          records.push(this.record({ type: 'RequestRecorded', data: {} }, job.caller));
          evolve(state, this.logged(records[0], state.revision + 1), journal);
        }
        (records[records.length - 1].metadata as unknown as EventMetadata).idempotency = note;
      }
      return { queued, records, answer };
    } catch (error) {
      journal.rollback(mark);
      return { queued, records: [], refusal: error };
    }
  }

  private record(event: DomainEvent, caller: Caller): EventToAppend {
    const resource = resourceOfEvent(event.type);
    const id = event.data.id as number | undefined;
    const entry = resource && id !== undefined ? `${collectionOf(resource).declaration.category}-${id}` : undefined;
    const metadata: EventMetadata = {
      actor: caller.actor,
      request_id: caller.requestId,
      at: this.clock.now().toISOString(),
      ...(entry ? { entry } : {}),
      schema: EVENT_SCHEMA,
      ...(caller.approval !== undefined ? { approval: caller.approval } : {}),
      ...(caller.changeSet !== undefined ? { change_set: caller.changeSet } : {}),
    };
    return { type: event.type, data: event.data, metadata: metadata as unknown as Record<string, unknown> };
  }

  private logged(record: EventToAppend, revision: number): LoggedEvent {
    return {
      type: record.type,
      data: record.data as LoggedEvent['data'],
      metadata: record.metadata as never,
      revision,
    };
  }

  /** Appends at the revision the batch was decided on, then folds the events at once (read-your-writes). */
  private async append(records: EventToAppend[]): Promise<void> {
    const from = this.projector.revision;
    await this.store.append(CONFIG_STREAM, records, from === -1 ? 'no_stream' : from);
    this.projector.apply(records.map((record, i) => this.logged(record, from + 1 + i)));
  }
}
