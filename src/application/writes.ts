// Over 300 lines: the write catalogue: one method per kind of write the service takes.
import type { ChangeItem } from '../../projections/changes.js';
import { decide } from '../domain/decide.js';
import type { Effect } from '../domain/evolve.js';
import {
  COLLECTION_NAMES,
  type CollectionName,
  collectionOf,
  type ResourceName,
  resourceOf,
} from '../domain/resources.js';
import { Conflict, Deleted, type FieldError, NotFound, ValidationFailed } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import type { Role } from '../domain/tokens/resource.js';
import type { EntryRecord } from '../engine/table.js';
import { DecidedBatch, type ParseWrite } from './batch.js';
import type { Changes } from './changes.js';
import type { Caller, Clock, GroupCommit } from './group-commit.js';
import { prepare, type WriteRequest, type WriteRequestOf } from './prepare.js';
import { PushDecider, type PushOutcome } from './push.js';
import type { PushRequest } from './push-request.js';
import type { Idempotency, RecordedResponse, RequestLog } from './requests.js';
import { KeyRotated } from './secret-key.js';
import type { SecretBox } from './secrets.js';
import { generateToken, tokenDigest } from './tokens.js';
import { decideImport, type ImportCounts, type ImportItem, itemPath } from './transfer.js';

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

/** An entry a delete changed, and the field that no longer holds the entry brought back. */
export interface NotRestored {
  resource: string;
  id: number;
  field: string;
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

export interface NewToken {
  name: string;
  role: Role;
  secrets: boolean;
  /** ISO 8601 UTC, or null for never. */
  expiresAt: string | null;
}

export interface IssuedToken {
  /** Shown once: the log keeps only its sealed digest. */
  token: string;
  entry: EntryRecord;
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

/** The resource's costly checks of an input (see ResourceDeclaration.prove): a 422 if any fails. */
async function proven(resource: ResourceName, input: Values): Promise<void> {
  const errors = (await resourceOf(resource).declaration.prove?.(input)) ?? [];
  if (errors.length > 0) throw new ValidationFailed(errors);
}

/** The costly checks of an import's entries, a few at a time (the thread pool has four threads): their problems, and the entries that have some. */
async function proofProblems(
  items: readonly ImportItem[],
): Promise<{ problems: FieldError[]; failed: Set<ImportItem> }> {
  const problems: FieldError[] = [];
  const failed = new Set<ImportItem>();
  const proving = items.filter((item) => resourceOf(item.resource).declaration.prove);
  for (let start = 0; start < proving.length; start += 4) {
    await Promise.all(
      proving.slice(start, start + 4).map(async (item) => {
        const errors = (await resourceOf(item.resource).declaration.prove!(item.input)) ?? [];
        if (errors.length > 0) failed.add(item);
        for (const error of errors)
          problems.push({ ...error, field: itemPath(item.resource, item.index, error.field) });
      }),
    );
  }
  return { problems, failed };
}

/**
 * What a hard delete (`deletion`, from the change log) did to other entries, where it is still so:
 * the entry `id`, back now, is not in that field again. A revert brings back one entry; putting it
 * back where it was is left to the client, which this lists.
 */
function notRestored(state: ConfigState, id: number, deletion: ChangeItem | undefined): NotRestored[] {
  const held = (value: unknown) => (Array.isArray(value) ? value.includes(id) : value === id);
  const found: NotRestored[] = [];
  for (const effect of deletion?.effects ?? []) {
    const entry = state.collections[effect.resource as CollectionName]?.get(effect.id);
    for (const { field, before, after } of effect.diff) {
      if (held(before) && !held(after) && entry && !held(entry[field])) {
        found.push({ resource: effect.resource, id: effect.id, field });
      }
    }
  }
  return found;
}

/** Every write the service takes, each as a job for the group commit. */
export class Writes {
  constructor(private readonly deps: WritesDeps) {}

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
    const decideOn: Decide = (state) => decide(prepare(asked as WriteRequest, state, prepared), state);
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
    const counts: ImportCounts = { created: 0, updated: 0, unchanged: 0 };
    const { secrets } = this.deps;
    const proofs = await proofProblems(items);
    const problems = [...(options.problems ?? []), ...proofs.problems];
    const { dryRun, secretsRight, skipInvalid } = options;
    const deps = { secrets, dryRun, secretsRight, skipInvalid, problems };
    // Refused anyway; without skipInvalid they are still decided, for their other problems.
    const decided = skipInvalid ? items.filter((item) => !proofs.failed.has(item)) : items;
    return this.run(
      caller,
      (state) => decideImport(decided, state, { ...deps, at: this.deps.clock.now().toISOString() }, counts),
      () => ({ ...counts }),
    );
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
      Object.assign(counts, { entries: 0, secrets: 0 });
      if (state.secretKey?.fingerprint === fingerprint) throw new Conflict('the log already names this key');
      const events: DomainEvent[] = [];
      for (const name of COLLECTION_NAMES) {
        const fields = collectionOf(name).secretFields;
        if (fields.length === 0) continue;
        for (const entry of state.collections[name].inOrder()) {
          const values: Record<string, string> = {};
          for (const field of fields) {
            const sealed = entry[field];
            if (typeof sealed === 'string' && sealed !== '')
              values[field] = next.seal(this.deps.secrets.open(sealed as Sealed));
          }
          if (Object.keys(values).length === 0) continue;
          events.push({ type: 'SecretsResealed', data: { resource: name, id: entry.id, values } });
          counts.entries++;
          counts.secrets += Object.keys(values).length;
        }
      }
      return [...events, { type: 'SecretKeyRecorded', data: { fingerprint } }];
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
   * PmaControl's push (push.ts): every server of the inventory decided in one batch, each with what
   * it names standing or falling alone, and one append for all; the same inventory again records
   * nothing (a password is compared with the one stored, opened).
   */
  push(request: PushRequest, parse: ParseWrite, caller: Caller): Promise<PushOutcome>;
  push(request: PushRequest, parse: ParseWrite, caller: Caller, once: OnceOptions<PushOutcome>): Promise<Once>;
  push(request: PushRequest, parse: ParseWrite, caller: Caller, once?: OnceOptions<PushOutcome>) {
    let outcome: PushOutcome | undefined;
    const decideOn: Decide = (state) => {
      const batch = new DecidedBatch(state, { secrets: this.deps.secrets }, this.deps.clock.now().toISOString());
      outcome = new PushDecider(batch, parse, request).decide(request.servers);
      return batch.end();
    };
    const answer: Answer<PushOutcome> = () => outcome!;
    return once ? this.once(caller, decideOn, answer, once) : this.run(caller, decideOn, answer);
  }

  /** Writes decided as one batch, all or nothing (a drift adopted): how many events they recorded. */
  applyAll(requests: readonly WriteRequest[], caller: Caller): Promise<number> {
    let count = 0;
    const decideOn: Decide = (state) => {
      const batch = new DecidedBatch(state, { secrets: this.deps.secrets }, this.deps.clock.now().toISOString());
      const refusal = batch.unit(() => {
        for (const request of requests) batch.apply(request);
      });
      if (refusal) throw refusal;
      count = batch.size;
      return batch.end();
    };
    return this.run(caller, decideOn, () => count);
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
