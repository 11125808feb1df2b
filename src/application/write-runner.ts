import type { Effect } from '../domain/evolve.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import { type GateAsk, type GatedJob, gatedJob, type WriteGate } from './gate.js';
import type { Caller, Clock, GroupCommit } from './group-commit.js';
import type { Idempotency, RecordedResponse, RequestLog } from './requests.js';
import { KeyRotated } from './secret-key.js';
import type { SecretBox } from './secrets.js';

/** A write sent with an Idempotency-Key: the answer to send, and whether it is the first one again. */
export interface Once {
  response: RecordedResponse;
  replayed: boolean;
}

/** How a write's result becomes the answer sent (and kept, with an Idempotency-Key). */
export interface OnceOptions<T> {
  idempotency: Idempotency;
  respond: (result: T) => RecordedResponse;
  /** What a retry gets instead of `respond`'s answer, when that must not be kept (a token is shown once). */
  keep?: (result: T) => RecordedResponse;
}

type Decide = (state: ConfigState) => DomainEvent[];
type Answer<T> = (state: ConfigState, effects: Effect[]) => T;

/** What running a write needs: the group commit, the key's state, the kept requests. */
export interface RunnerDeps {
  groupCommit: GroupCommit;
  keyRotated: () => boolean;
  secrets: SecretBox;
  requests: RequestLog;
  clock: Clock;
}

/**
 * How every write is run: as a job of the group commit, under the current key, through the gates of
 * the wings when it is a gated one, and with an Idempotency-Key, at most once.
 */
export class WriteRunner {
  /** The wings' say on every gated write (approvals, change sets), in the order they were added. */
  readonly gates: WriteGate[] = [];

  constructor(private readonly deps: RunnerDeps) {}

  /** A write as such; `ask`: a write the gate decides on (held for approval, or run). */
  async run<T>(caller: Caller, decideOn: Decide, answer: Answer<T>, ask?: GateAsk): Promise<T> {
    const job = this.gated(caller, decideOn, answer, ask);
    const result = await this.deps.groupCommit.submit({ caller, decide: job.decide, answer: job.answer });
    return job.settle(result);
  }

  private gated<T>(caller: Caller, decideOn: Decide, answer: Answer<T>, ask?: GateAsk): GatedJob<T> {
    const seal = (plain: string) => this.deps.secrets.seal(plain);
    return gatedJob(this.gates, ask, { caller, decide: this.underCurrentKey(decideOn), answer, seal });
  }

  /** Nothing is sealed, or written, under a key the log no longer names. */
  private underCurrentKey(decideOn: Decide): Decide {
    return (state) => {
      if (this.deps.keyRotated()) throw new KeyRotated();
      return decideOn(state);
    };
  }

  /**
   * A write with an Idempotency-Key: decided only if no request with that key was recorded (else the
   * first answer, or a 422 if the key came with another request); its answer is kept with its events.
   */
  async once<T>(
    caller: Caller,
    decideOn: Decide,
    answer: Answer<T>,
    options: OnceOptions<T>,
    ask?: GateAsk,
  ): Promise<Once> {
    const { requests, clock } = this.deps;
    const job = this.gated(caller, decideOn, answer, ask);
    const done = requests.begin(caller.actor, options.idempotency.key);
    try {
      let first: RecordedResponse | undefined;
      let kept: RecordedResponse | undefined;
      const response = await this.deps.groupCommit.submit<RecordedResponse>({
        caller,
        decide: (state) => {
          first = requests.find(caller.actor, options.idempotency, clock.now());
          return first ? [] : job.decide(state);
        },
        answer: (state, effects) => {
          if (first) return first;
          const result = job.answer(state, effects);
          // A request held for approval: its 202 is the answer, kept for a retry like any other.
          const sent = job.heldResponse() ?? options.respond(result);
          kept = job.heldResponse() ?? options.keep?.(result) ?? sent;
          return sent;
        },
        remember: () => (first || !kept ? undefined : requests.note(options.idempotency, kept)),
      });
      return { response, replayed: first !== undefined };
    } finally {
      done();
    }
  }
}
