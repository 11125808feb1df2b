import type { Effect } from '../domain/evolve.js';
import type { Operation } from '../domain/policies/resource.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import type { Caller } from './group-commit.js';
import type { WriteRequest } from './prepare.js';
import type { RecordedResponse } from './requests.js';

/** What a configuration write is for the approval policies, and the request an approval keeps to run it again. */
export function writeAsk(request: WriteRequest): GateAsk {
  const kinds = { create: 'create', replace: 'update', patch: 'update', delete: 'delete', revert: 'revert' } as const;
  const operation = request.resource === 'policies' ? 'policy-change' : kinds[request.kind];
  return { operation, request: { kind: 'write', write: request } };
}

/** What a gated write is, for the gate: its operation, and the request to run again once approved (JSON). */
export interface GateAsk {
  operation: Operation;
  request: unknown;
}

/** What a gate decided of one write. */
export interface GateOutcome {
  /** The events to record: the write's own (maybe with more), or others in their place. */
  events: DomainEvent[];
  /**
   * The answer in place of the write's own, read from the state once `events` are folded (a request
   * held for approval: 202 with the approval; a write staged in a change set: 202 with the entry).
   */
  answer?: (state: ConfigState) => RecordedResponse;
  /** A refusal answered once `events` are recorded (an approval found expired or stale). */
  refusal?: Error;
}

/** What a gate is asked: the write, the caller, the state it is decided on. */
export type GateQuestion = GateAsk & {
  caller: Caller;
  state: ConfigState;
  /** The write's own events, decided on `state` as it is when called. */
  write: () => DomainEvent[];
  /** Seals a text under the service's key (an approval keeps its request so). */
  seal: (plain: string) => string;
};

/**
 * The plug point of a wing that has a say on every gated write (configuration writes, secret reads,
 * token issues, imports): approvals (section 16), change sets (section 17). Gates are asked in the
 * order they were added, deciding on the state the write is decided on, in the same append; the
 * first that answers decides (it runs the write, records something else instead, or adds to it),
 * and the write runs as it is when none does.
 */
export interface WriteGate {
  decide(question: GateQuestion): GateOutcome | undefined;
}

/** A gated write's own answer in place of the route's (a 202), thrown once its events are recorded. */
export class Held extends Error {
  constructor(readonly response: RecordedResponse) {
    super('answered by a gate');
  }
}

type Decide = (state: ConfigState) => DomainEvent[];
type Answer<T> = (state: ConfigState, effects: Effect[]) => T;

/** One write through the gate: its decision and answer, and what to do once it is appended. */
export interface GatedJob<T> {
  decide: Decide;
  answer: Answer<T>;
  /** The gate's own answer (a 202), once decided and answered; else undefined. */
  heldResponse(): RecordedResponse | undefined;
  /** After the append: throws the gate's own answer, or the refusal recorded; else the result. */
  settle(result: T): T;
}

/** Whether a caller's writes go through the gates: a client of the API, an approval's execution, a change set's. */
const gated = (caller: Caller) =>
  caller.role !== undefined || caller.approval !== undefined || caller.changeSet !== undefined;

/** The first gate's outcome, or the write as it is. */
function decided(gates: readonly WriteGate[], question: GateQuestion): GateOutcome {
  for (const gate of gates) {
    const outcome = gate.decide(question);
    if (outcome) return outcome;
  }
  return { events: question.write() };
}

/** A write as it is without a gate, or as the gates decide it when the caller is gated. */
export function gatedJob<T>(
  gates: readonly WriteGate[],
  ask: GateAsk | undefined,
  job: { caller: Caller; decide: Decide; answer: Answer<T>; seal: (plain: string) => string },
): GatedJob<T> {
  const { caller, decide, answer, seal } = job;
  if (gates.length === 0 || !ask || !gated(caller))
    return { decide, answer, heldResponse: () => undefined, settle: (result) => result };
  let outcome: GateOutcome | undefined;
  let held: RecordedResponse | undefined;
  return {
    decide: (state) => {
      held = undefined;
      outcome = decided(gates, { ...ask, caller, state, write: () => decide(state), seal });
      return outcome.events;
    },
    answer: (state, effects) => {
      if (outcome?.answer) {
        held = outcome.answer(state);
        return undefined as T;
      }
      return outcome?.refusal ? (undefined as T) : answer(state, effects);
    },
    heldResponse: () => held,
    settle: (result) => {
      if (held) throw new Held(held);
      if (outcome?.refusal) throw outcome.refusal;
      return result;
    },
  };
}
