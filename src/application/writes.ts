import type { ChangeItem } from '../../projections/changes.js';
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
import type { Caller, Clock, GroupCommit } from './group-commit.js';
import { prepare, type WriteRequest, type WriteRequestOf } from './prepare.js';
import type { Idempotency, RecordedResponse, RequestLog } from './requests.js';
import { KeyRotated } from './secret-key.js';
import type { SecretBox } from './secrets.js';
import { generateToken, type IssuedToken, type NewToken, tokenDigest } from './tokens.js';
import { decideImport, type ImportCounts, type ImportItem } from './transfer.js';
import { decideRotation, type NotRestored, notRestored, proofProblems, proven } from './write-checks.js';

export { DecidedBatch } from './batch.js';
export type { WriteRequest } from './prepare.js';
export type { IssuedToken, NewToken } from './tokens.js';
export type { NotRestored } from './write-checks.js';

export interface WriteResult {
  id: number;
  /** The entry after the write; undefined after a hard delete. */
  entry?: EntryRecord;
  /** False when the write changed nothing and recorded no event. */
  changed: boolean;
  /**
   * A revert that brought a hard-deleted entry back: the entries its delete had changed (a server
   * that lost a deleted tag, a soft-deleted server moved to client 99) that still do not hold it.
   */
  notRestored?: NotRestored[];
}

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

  constructor(private readonly deps: WritesDeps) {}

  /** A wing's rules on every write (PmaControl's columns): a check of each entry, where new ids start. */
  addRules(rules: DecideRules): void {
    this.rules.add(rules);
  }

  /** A write as such. */
  private run<T>(caller: Caller, decideOn: Decide, answer: Answer<T>): Promise<T> {
    return this.deps.groupCommit.submit({ caller, decide: this.underCurrentKey(decideOn), answer });
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
  private async once<T>(caller: Caller, decideOn: Decide, answer: Answer<T>, options: OnceOptions<T>): Promise<Once> {
    const { requests, clock } = this.deps;
    const done = requests.begin(caller.actor, options.idempotency.key);
    try {
      let first: RecordedResponse | undefined;
      let kept: RecordedResponse | undefined;
      const response = await this.deps.groupCommit.submit<RecordedResponse>({
        caller,
        decide: (state) => {
          first = requests.find(caller.actor, options.idempotency, clock.now());
          return first ? [] : this.underCurrentKey(decideOn)(state);
        },
        answer: (state, effects) => {
          if (first) return first;
          const result = answer(state, effects);
          const sent = options.respond(result);
          kept = options.keep?.(result) ?? sent;
          return sent;
        },
        remember: () => (first || !kept ? undefined : requests.note(options.idempotency, kept)),
      });
      return { response, replayed: first !== undefined };
    } finally {
      done();
    }
  }

  /** A configuration write; with `once`, under an Idempotency-Key. */
  execute<R extends ResourceName>(request: WriteRequestOf<R>, caller: Caller): Promise<WriteResult>;
  execute<R extends ResourceName>(
    request: WriteRequestOf<R>,
    caller: Caller,
    once: OnceOptions<WriteResult>,
  ): Promise<Once>;
  async execute<R extends ResourceName>(request: WriteRequestOf<R>, caller: Caller, once?: OnceOptions<WriteResult>) {
    if ('input' in request) await proven(request.resource, request.input as Values);
    const { asked, deletion } = await this.lookedUp(request);
    const prepared = { secrets: this.deps.secrets };
    const decideOn: Decide = (state) => decide(prepare(asked as WriteRequest, state, prepared), state, this.rules);
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
    return once ? this.once(caller, decideOn, answer, once) : this.run(caller, decideOn, answer);
  }

  /**
   * What a revert needs from the change log, read before it is decided (it never changes once
   * written): the values of the version asked for, and, for an entry hard-deleted now, what its
   * delete did to other entries.
   */
  private async lookedUp<R extends ResourceName>(
    request: WriteRequestOf<R>,
  ): Promise<{ asked: WriteRequestOf<R>; deletion?: ChangeItem }> {
    if (request.kind !== 'revert') return { asked: request };
    const { changes } = this.deps;
    const values = await changes.versionOf(request.resource, request.id, request.toVersion);
    let deletion: ChangeItem | undefined;
    if (this.deps.state().collections[request.resource].tombstone(request.id)) {
      const type = resourceOf(request.resource).events.deleted;
      const query = { resource: request.resource, id: request.id, type, order: 'desc' } as const;
      for await (const item of changes.changes(query)) {
        deletion = item;
        break;
      }
    }
    return { asked: { ...request, values }, deletion };
  }

  /**
      const entry = state.collections[effect.resource as CollectionName]?.get(effect.id);
      for (const { field, before, after } of effect.diff) {
        if (held(before) && !held(after) && entry && !held(entry[field])) {
          found.push({ resource: effect.resource, id: effect.id, field });
        }
      }
    }
    return found;
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
    return this.batch((batch) => decideImport(decided, batch, { dryRun, secretsRight, skipInvalid, problems }), caller);
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
    return this.run(caller, decideOn, (state) => {
      const entry = state.collections[resource].get(id);
      const open = (sealed: unknown) =>
        typeof sealed === 'string' && sealed !== '' ? this.deps.secrets.open(sealed as Sealed) : null;
      return Object.fromEntries(fields.map((field) => [field, open(entry?.[field])]));
    });
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
    const fields = { name, role, secrets, expires_at: expiresAt, digest, revoked_at: null };
    const decideOn: Decide = (state) => decide({ kind: 'create', resource: 'tokens', fields }, state);
    const answer: Answer<IssuedToken> = (state, effects) => ({
      token,
      entry: state.collections.tokens.get(effects[0].id)!,
    });
    return once ? this.once(caller, decideOn, answer, once) : this.run(caller, decideOn, answer);
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
    const answer: Answer<T> = () => result as T;
    return once ? this.once(caller, decideOn, answer, once) : this.run(caller, decideOn, answer);
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
