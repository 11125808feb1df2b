import { type DecideRules, decide } from '../domain/decide.js';
import { type Effect, evolve } from '../domain/evolve.js';
import type { ResourceName } from '../domain/resources.js';
import { DomainError } from '../domain/shared/errors.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import { Journal } from '../engine/journal.js';
import { type PrepareDeps, prepare, type WriteRequest } from './prepare.js';

/**
 * Checks and completes a write's fields as the routes do (defaults included), in the create or patch
 * mode: what the application is given to read bodies that do not come through a route (a push, a
 * row of PmaControl's read back).
 */
export type ParseWrite = (
  resource: ResourceName,
  mode: 'create' | 'replace' | 'patch',
  body: Record<string, unknown>,
) => Record<string, unknown>;

/**
 * Many writes decided as one batch (an import, a push): each request is decided on the state as the
 * ones before it left it, and applied at once under the undo journal, so that the next one sees it.
 * A unit of requests stands or falls together; `end` undoes everything, and the writer folds the
 * events again as one append.
 */
export class DecidedBatch {
  private readonly journal = new Journal();
  private readonly made: DomainEvent[] = [];
  private readonly metadata: { actor: string; request_id: string; at: string };

  constructor(
    readonly state: ConfigState,
    private readonly deps: PrepareDeps,
    at: string,
    private readonly rules?: DecideRules,
  ) {
    this.metadata = { actor: 'batch', request_id: 'batch', at };
  }

  /** Decides one request and applies its events; the effects say what changed (none: nothing to record). */
  apply(request: WriteRequest): Effect[] {
    const effects: Effect[] = [];
    for (const event of decide(prepare(request, this.state, this.deps), this.state, this.rules)) {
      effects.push(
        ...evolve(this.state, { ...event, metadata: this.metadata, revision: this.state.revision + 1 }, this.journal),
      );
      this.made.push(event);
    }
    return effects;
  }

  /**
   * Runs `unit`: all the requests it applies stand, or, if it is refused (a DomainError), none does
   * and the refusal is returned. Any other error is thrown.
   */
  unit(unit: () => void): DomainError | undefined {
    const mark = this.journal.mark();
    const count = this.made.length;
    try {
      unit();
      return undefined;
    } catch (error) {
      if (!(error instanceof DomainError)) {
        this.journal.rollback(); // the state is left as it was found
        throw error;
      }
      this.journal.rollback(mark);
      this.made.length = count;
      return error;
    }
  }

  /**
   * Drops every request applied so far (a dry run decides everything and records none of it); the
   * state is left as it was found.
   */
  discard(): void {
    this.journal.rollback();
    this.made.length = 0;
  }

  /** Adds an event that changes no entry (SecretsCompared: an audit note), recorded as it is. */
  note(event: DomainEvent): void {
    this.made.push(event);
  }

  /** How many events the batch holds so far. */
  get size(): number {
    return this.made.length;
  }

  /** Undoes every request on the state and gives their events, to be appended. */
  end(): DomainEvent[] {
    this.journal.rollback();
    return this.made;
  }
}
