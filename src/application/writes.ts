import { type DecideRules, decide } from '../domain/decide.js';
import type { Effect } from '../domain/evolve.js';
import { type ResourceName, resourceOf } from '../domain/resources.js';
import { Deleted, type FieldError, NotFound } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import type { EntryRecord } from '../engine/table.js';
import { AddedRules } from './added-rules.js';
import { DecidedBatch } from './batch.js';
import type { Changes } from './changes.js';
import { type GateAsk, type WriteGate, writeAsk } from './gate.js';
import type { Caller, Clock, GroupCommit } from './group-commit.js';
import { prepare, type WriteRequest, type WriteRequestOf } from './prepare.js';
import type { RequestLog } from './requests.js';
import { lookedUp } from './revert-lookup.js';
import type { SecretBox } from './secrets.js';
import { generateToken, type IssuedToken, type NewToken, tokenDigest } from './tokens.js';
import { decideImport, type ImportCounts, type ImportItem } from './transfer.js';
import { decideRotation, type NotRestored, notRestored, proofProblems, proven } from './write-checks.js';
import { type Once, type OnceOptions, WriteRunner } from './write-runner.js';

export { DecidedBatch } from './batch.js';
export type { GateOutcome, GateQuestion, WriteGate } from './gate.js';
export type { WriteRequest } from './prepare.js';
export type { IssuedToken, NewToken } from './tokens.js';
export type { ImportItem } from './transfer.js';
export type { NotRestored } from './write-checks.js';
export type { Once, OnceOptions } from './write-runner.js';

export interface WriteResult {
  id: number;
  /** The entry after the write; undefined after a hard delete. */
  entry?: EntryRecord;
  /** False when the write changed nothing and recorded no event. */
  changed: boolean;
  /** A revert that brought a hard-deleted entry back: the entries its delete changed that still do not hold it. */
  notRestored?: NotRestored[];
}

export interface WritesDeps {
  groupCommit: GroupCommit;
  /** True once the log names another key than this instance's (see ConfigService.keyRotated). */
  keyRotated: () => boolean;
  secrets: SecretBox;
  /** The change log, for what a revert needs to know of the past. */
  changes: Changes;
  /** The state as folded now. */
  state: () => ConfigState;
  requests: RequestLog;
  clock: Clock;
}

type Decide = (state: ConfigState) => DomainEvent[];

type Answer<T> = (state: ConfigState, effects: Effect[]) => T;
type Values = Record<string, unknown>;

/** Every write the service takes, each as a job for the group commit. */
export class Writes {
  private readonly rules = new AddedRules();
  private readonly runner: WriteRunner;

  constructor(private readonly deps: WritesDeps) {
    this.runner = new WriteRunner(deps);
  }

  /** A wing's rules on every write (PmaControl's columns): a check of each entry, where new ids start. */
  addRules(rules: DecideRules): void {
    this.rules.add(rules);
  }

  /** A wing's say on every gated write (WriteGate: approvals, change sets), asked after those added before. */
  addGate(gate: WriteGate): void {
    this.runner.gates.push(gate);
  }

  /** A write as such; `ask`: a write the gate decides on (held for approval, or run). */
  private run<T>(caller: Caller, decideOn: Decide, answer: Answer<T>, ask?: GateAsk): Promise<T> {
    return this.runner.run(caller, decideOn, answer, ask);
  }

  /** A write with an Idempotency-Key (WriteRunner.once). */
  private once<T>(caller: Caller, decideOn: Decide, answer: Answer<T>, options: OnceOptions<T>, ask?: GateAsk) {
    return this.runner.once(caller, decideOn, answer, options, ask);
  }

  /** A configuration write; with `once`, under an Idempotency-Key. */
  execute<R extends ResourceName>(request: WriteRequestOf<R>, caller: Caller): Promise<WriteResult>;
  execute<R extends ResourceName>(
    request: WriteRequestOf<R>,
    caller: Caller,
    once: OnceOptions<WriteResult>,
  ): Promise<Once>;
  async execute<R extends ResourceName>(request: WriteRequestOf<R>, caller: Caller, once?: OnceOptions<WriteResult>) {
    await this.prove(request as WriteRequest);
    const { asked, deletion } = await lookedUp(request, this.deps.changes, this.deps.state());
    const decideOn: Decide = (state) => this.decided(asked as WriteRequest, state);
    const answer: Answer<WriteResult> = (state, effects) => {
      const id = effects[0]?.id ?? ('id' in request ? request.id : undefined) ?? 0;
      const result: WriteResult = {
        id,
        entry: state.collections[request.resource].get(id),
        changed: effects.length > 0,
      };
      if (request.kind === 'revert' && effects[0] && !effects[0].before) {
        result.notRestored = notRestored(state, id, deletion);
      }
      return result;
    };
    const ask = writeAsk(asked as WriteRequest);
    return once ? this.once(caller, decideOn, answer, once, ask) : this.run(caller, decideOn, answer, ask);
  }

  /** The costly checks of a write's input (an SSH key pair's match), run before it is decided or staged. */
  async prove(request: WriteRequest): Promise<void> {
    if ('input' in request) await proven(request.resource, request.input as Values);
  }

  /**
   * The events a configuration write would record on `state`, every rule applied, nothing recorded
   * (a change set's staged writes, decided again on the configuration as it is); a revert carries the
   * values of its version. Throws the write's refusal.
   */
  decided(request: WriteRequest, state: ConfigState): DomainEvent[] {
    return decide(prepare(request, state, { secrets: this.deps.secrets }), state, this.rules);
  }

  /**
   * Imports entries (section 11): each created, or replaced if its id exists, under the rules of POST
   * and PUT, all in one append, or nothing at all; with `skipInvalid`, the entries that can be, the
   * others listed. A dry run decides everything and records nothing. `problems`: those found reading
   * the document, listed with the ones found deciding.
   */
  async importEntries(
    items: readonly ImportItem[],
    caller: Caller,
    options: { dryRun: boolean; secretsRight: boolean; problems?: readonly FieldError[]; skipInvalid?: boolean },
  ): Promise<ImportCounts> {
    const proofs = await proofProblems(items);
    const problems = [...(options.problems ?? []), ...proofs.problems];
    const { dryRun, secretsRight, skipInvalid } = options;
    // Refused anyway; without skipInvalid they are still decided, for their other problems.
    const decided = skipInvalid ? items.filter((item) => !proofs.failed.has(item)) : items;
    const build = (batch: DecidedBatch) =>
      decideImport(decided, batch, { dryRun, secretsRight, skipInvalid, problems });
    // A dry run records nothing: it is not held.
    const ask: GateAsk | undefined = dryRun
      ? undefined
      : { operation: 'import', request: { kind: 'import', items, options: { secretsRight, skipInvalid } } };
    const job = this.batchJob(build);
    return this.run(caller, job.decideOn, job.answer, ask);
  }

  /**
   * Key rotation: every secret of every entry (passwords, private keys, token digests) re-sealed
   * under `next`, one SecretsResealed event per entry, then the new key's fingerprint recorded; all
   * in one append. From then on the log names the new key: instances still on the old one serve
   * reads and refuse writes until restarted with it.
   */
  rotateKey(next: SecretBox, fingerprint: string, caller: Caller): Promise<{ entries: number; secrets: number }> {
    const counts = { entries: 0, secrets: 0 };
    const decideOn: Decide = (state) => {
      const { events, entries, secrets } = decideRotation(state, this.deps.secrets, next, fingerprint);
      Object.assign(counts, { entries, secrets });
      return events;
    };
    return this.run(caller, decideOn, () => ({ ...counts }));
  }

  /**
   * The secrets of one entry in plain text, for the platform (a token with the `secrets` right): each
   * secret field the resource declares, its read first recorded as a SecretRevealed event (the
   * entry, the field and the actor, never the value), then answered. Null for a secret not set.
   */
  revealSecrets(resource: ResourceName, id: number, caller: Caller): Promise<Record<string, string | null>> {
    const fields = resourceOf(resource).secretFields;
    const decideOn: Decide = (state) => {
      const col = state.collections[resource];
      if (!col.get(id)) throw col.tombstone(id) ? new Deleted(resource, id) : new NotFound(resource, id);
      return fields.map((field) => ({ type: 'SecretRevealed', data: { resource, id, field } }));
    };
    const ask: GateAsk = { operation: 'secret-read', request: { kind: 'secret-read', resource, id } };
    return this.run(
      caller,
      decideOn,
      (state) => {
        const entry = state.collections[resource].get(id);
        const open = (sealed: unknown) =>
          typeof sealed === 'string' && sealed !== '' ? this.deps.secrets.open(sealed as Sealed) : null;
        return Object.fromEntries(fields.map((field) => [field, open(entry?.[field])]));
      },
      ask,
    );
  }

  /** Seals a text under the service's key (a wing's own sealed field: a staged write). */
  seal(plain: string): string {
    return this.deps.secrets.seal(plain);
  }

  /** The plain text of a secret sealed by a service with this one's key; undefined for any other. */
  openSealed(sealed: string): string | undefined {
    return this.deps.secrets.tryOpen(sealed as Sealed);
  }

  /** Issues a token; the token is in the answer only (and, sealed, in the kept answer of a retry). */
  issueToken(request: NewToken, caller: Caller): Promise<IssuedToken>;
  issueToken(request: NewToken, caller: Caller, once: OnceOptions<IssuedToken>): Promise<Once>;
  issueToken(request: NewToken, caller: Caller, once?: OnceOptions<IssuedToken>) {
    const token = generateToken();
    const digest = this.deps.secrets.seal(tokenDigest(token));
    const { name, role, secrets, expiresAt } = request;
    const fields = {
      name,
      role,
      secrets,
      break_glass: request.breakGlass === true,
      expires_at: expiresAt,
      digest,
      revoked_at: null,
    };
    const decideOn: Decide = (state) => decide({ kind: 'create', resource: 'tokens', fields }, state);
    const answer: Answer<IssuedToken> = (state, effects) => ({
      token,
      entry: state.collections.tokens.get(effects[0].id)!,
    });
    const ask: GateAsk = { operation: 'token-issue', request: { kind: 'token-issue', token: request } };
    return once ? this.once(caller, decideOn, answer, once, ask) : this.run(caller, decideOn, answer, ask);
  }

  /**
   * Many writes decided as one batch (the plug point of a wing's batched write: PmaControl's push, a
   * drift adopted): `build` applies them to a DecidedBatch, each unit of requests standing or falling
   * alone, and its result is the answer; everything it applied is one append. A refusal it throws (a
   * DomainError) refuses the whole batch. With `once`, under an Idempotency-Key.
   */
  batch<T>(build: (batch: DecidedBatch) => T, caller: Caller): Promise<T>;
  batch<T>(build: (batch: DecidedBatch) => T, caller: Caller, once: OnceOptions<T>): Promise<Once>;
  batch<T>(build: (batch: DecidedBatch) => T, caller: Caller, once?: OnceOptions<T>) {
    const { decideOn, answer } = this.batchJob(build);
    return once ? this.once(caller, decideOn, answer, once) : this.run(caller, decideOn, answer);
  }

  /** A batch's decision, and its result as the answer. */
  private batchJob<T>(build: (batch: DecidedBatch) => T): { decideOn: Decide; answer: Answer<T> } {
    let result: T | undefined;
    const decideOn: Decide = (state) => {
      const at = this.deps.clock.now().toISOString();
      const batch = new DecidedBatch(state, { secrets: this.deps.secrets }, at, this.rules);
      try {
        result = build(batch);
      } catch (error) {
        batch.end();
        throw error;
      }
      return batch.end();
    };
    return { decideOn, answer: () => result as T };
  }

  /**
   * A wing's own events (an approval's vote, a change set's merge), decided on the state: `step` gives
   * the events to record and, maybe, a refusal answered once they are recorded (an approval found
   * expired: recorded, 410); with `ask`, through the gates (a merge an approval policy holds).
   */
  async record<T>(
    caller: Caller,
    step: (state: ConfigState) => { events: DomainEvent[]; refusal?: Error },
    answer: (state: ConfigState) => T,
    ask?: GateAsk,
  ): Promise<T> {
    let refusal: Error | undefined;
    const decideOn: Decide = (state) => {
      const decided = step(state);
      refusal = decided.refusal;
      return decided.events;
    };
    const result = await this.run(caller, decideOn, (state) => (refusal ? (undefined as T) : answer(state)), ask);
    if (refusal) throw refusal;
    return result;
  }

  /** Revokes a token (again: nothing to do). */
  revokeToken(id: number, caller: Caller): Promise<EntryRecord>;
  revokeToken(id: number, caller: Caller, once: OnceOptions<EntryRecord>): Promise<Once>;
  revokeToken(id: number, caller: Caller, once?: OnceOptions<EntryRecord>) {
    const decideOn: Decide = (state) => {
      const fields = { revoked_at: this.deps.clock.now().toISOString() };
      return decide({ kind: 'patch', resource: 'tokens', id, fields }, state);
    };
    const answer: Answer<EntryRecord> = (state) => state.collections.tokens.get(id)!;
    return once ? this.once(caller, decideOn, answer, once) : this.run(caller, decideOn, answer);
  }
}
