import { Journal } from '../engine/journal.js';
import { type Effect, evolve } from './evolve.js';
import type { DomainEvent } from './shared/types.js';
import type { ConfigState } from './state.js';

/** Folds events into the state tentatively: what they change, in order (undone by `tentatively`). */
export type Fold = (events: readonly DomainEvent[]) => Effect[];

/**
 * Runs `work` on the state with a way to fold events into it tentatively, then undoes every fold: the
 * state is as it was when `work` returns or throws. `work` must not wait: nothing else may see the
 * state meanwhile. What a staged change set would make of the configuration is computed so.
 */
export function tentatively<T>(state: ConfigState, at: string, work: (fold: Fold) => T): T {
  const journal = new Journal();
  const metadata = { actor: 'tentative', request_id: 'tentative', at };
  const fold: Fold = (events) =>
    events.flatMap((event) => evolve(state, { ...event, revision: state.revision + 1, metadata }, journal));
  try {
    return work(fold);
  } finally {
    journal.rollback();
  }
}
