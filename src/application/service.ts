import type { HistoryItem } from '../../projections/changes.js';
import { genesisEvents } from '../domain/genesis.js';
import type { ResourceName } from '../domain/resources.js';
import { Deleted, NotFound } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import { CONFIG_STREAM, type DomainEvent } from '../domain/shared/types.js';
import type { ConfigState, RecordedKey } from '../domain/state.js';
import type { EntryRecord } from '../engine/table.js';
import type { EventStore } from '../event-store/port.js';
import { type ReadModelStore, ReadModelsRebuilding } from '../read-models/port.js';
import { Changes } from './changes.js';
import { ChangesFeed, type FeedLimits } from './changes-feed.js';
import { type Caller, type Clock, GroupCommit } from './group-commit.js';
import { type LeafOf, Projector } from './projector.js';
import { assertLogHolds } from './read-model-origin.js';
import { RequestLog, WINDOW_MS } from './requests.js';
import { assertMatches, firstSecret, keyFingerprint } from './secret-key.js';
import { createSecretBox, type SecretBox } from './secrets.js';
import { StartRefused } from './start-refused.js';
import { type Principal, type Refusal, TokenTable } from './tokens.js';
import { Writes } from './writes.js';

// What the wings (src/<wing>/) use of the application: they reach it through this facade and writes.ts.
export type { ChangeItem, HistoryItem } from '../../projections/changes.js';
export type { EventStore, RecordedEvent } from '../event-store/port.js';
export { logged } from '../event-store/port.js';
export type { AuditReader, ChangeQuery } from '../read-models/port.js';
export type { ParseWrite } from './batch.js';
export type { Caller, Clock } from './group-commit.js';
export { createKeyFile, readProtected } from './key-files.js';
export type { LeafOf } from './projector.js';
export { StartRefused } from './start-refused.js';
export type { Principal } from './tokens.js';
export type { Once, OnceOptions, WriteResult } from './writes.js';

export interface ServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  /** The key secrets are sealed under, checked against the fingerprint the log recorded (if any). */
  secretKey: (recorded: RecordedKey | undefined) => Buffer;
  /** Keys retired by rotations: values sealed before a rotation (history, revert) open with them. */
  retiredKeys?: () => Buffer[];
  /** The leaf of each event in the Merkle tree the read models keep (the verifiable log's wing gives it). */
  leafOf: LeafOf;
  clock: Clock;
  /** Called during the start-up catch-up with the position reached, after each batch. */
  onProgress?: (position: number) => void;
  onBackgroundError?: (error: Error) => void;
  /** The live feed's bounds (MAX_SUBSCRIBERS, FEED_MAX_BUFFER_BYTES). */
  feed?: FeedLimits;
  /** Told when damaged stored read models are set aside, and when their rebuild from the log is saved. */
  onRepair?: (event: RepairEvent) => void;
}

export type RepairEvent =
  | { step: 'started'; reason: string; setAsideAs?: string }
  | { step: 'done'; events: number; ms: number };

/** How long a rebuild of damaged read models that failed (the log unreadable) waits before it tries again. */
const REPAIR_RETRY_MS = 1000;

const SYSTEM: Caller = { actor: 'system', requestId: 'genesis' };

/**
 * The application: writes go through the group commit (prepare, decide, append, fold), reads
 * are answered from the projected state and the read models.
 */
export class ConfigService {
  readonly projector: Projector;
  /** The auditor's questions: the change log, time travel, differences. */
  readonly changes: Changes;
  /** The live change feed. */
  readonly feed: ChangesFeed;
  private readonly groupCommit: GroupCommit;
  private secrets?: SecretBox;
  private keyFingerprint?: string;
  private writes?: Writes;
  private tokenTable?: TokenTable;
  /** The rebuild of damaged stored read models under way (see repair). */
  private repair?: Promise<void>;
  private stopped = false;

  constructor(private readonly deps: ServiceDeps) {
    this.projector = new Projector(deps.store, deps.readModels, deps.leafOf, deps.onBackgroundError);
    this.groupCommit = new GroupCommit(deps.store, this.projector, deps.clock);
    this.changes = new Changes(
      deps.readModels,
      () => this.projector.flush(),
      () => this.projector.state,
      (sealed) => this.secrets?.tryOpen(sealed),
    );
    this.feed = new ChangesFeed(this.changes, deps.feed);
    this.projector.listen(this.feed.publish);
    deps.readModels.onDamage((reason) => void this.repairStored(reason));
  }

  /** Whether damaged stored read models are being rebuilt from the log (the instance is then not ready). */
  get repairing(): boolean {
    return this.repair !== undefined;
  }

  /**
   * Sets the damaged stored read models aside and rebuilds them from the log (Projector.restore),
   * trying again while the log cannot be read; the change log's questions are answered 503 meanwhile.
   */
  private repairStored(reason: string): Promise<void> {
    this.repair ??= (async () => {
      const started = performance.now();
      const setAsideAs = this.deps.readModels.reset();
      this.deps.onRepair?.({ step: 'started', reason, setAsideAs });
      for (;;) {
        try {
          await this.projector.restore();
          break;
        } catch (error) {
          if (this.stopped) return;
          this.deps.onBackgroundError?.(error as Error);
          await new Promise((resolve) => setTimeout(resolve, REPAIR_RETRY_MS));
        }
      }
      this.deps.readModels.rebuilt();
      this.deps.onRepair?.({ step: 'done', events: this.revision + 1, ms: Math.round(performance.now() - started) });
    })().finally(() => {
      this.repair = undefined;
    });
    return this.repair;
  }

  async start(): Promise<void> {
    this.projector.load();
    const origin = { revision: this.projector.revision, digest: this.projector.digest };
    await assertLogHolds(this.deps.store, CONFIG_STREAM, origin, this.deps.readModels.location);
    await this.projector.catchUp(this.deps.onProgress);
    const key = this.deps.secretKey(this.state.secretKey);
    this.secrets = createSecretBox(key, this.deps.retiredKeys?.() ?? []);
    this.keyFingerprint = keyFingerprint(key);
    if (this.projector.revision === -1)
      await this.writeOnce(genesisEvents(keyFingerprint(key)), (s) => s.revision === -1);
    else if (!this.state.secretKey) await this.recordLegacyKey(key);
    // Another instance may have written first, with its own key: this one must be the same.
    assertMatches(key, "this instance's key", this.state.secretKey!);
    await this.startIdentity(key);
    this.projector.follow(this.deps.onBackgroundError ?? (() => {}));
  }

  /** Tokens and Idempotency-Keys: indexes kept from the log, which need the key to open what is sealed. */
  private async startIdentity(key: Buffer): Promise<void> {
    const secrets = this.secrets!;
    this.tokenTable = new TokenTable(() => this.state, secrets);
    this.tokenTable.load();
    this.projector.listen(this.tokenTable.update);
    const requests = new RequestLog(secrets, key);
    const since = new Date(this.deps.clock.now().getTime() - WINDOW_MS).toISOString();
    this.projector.flush();
    try {
      requests.load(this.deps.readModels.requestsSince(since));
    } catch (error) {
      if (!(error instanceof ReadModelsRebuilding)) throw error;
      await this.repair;
      requests.load(this.deps.readModels.requestsSince(since));
    }
    this.projector.listen(requests.update);
    this.writes = new Writes({
      groupCommit: this.groupCommit,
      keyRotated: () => this.keyRotated,
      secrets,
      changes: this.changes,
      state: () => this.state,
      requests,
      clock: this.deps.clock,
    });
    this.fingerprintOf = (method, path, body) => requests.fingerprint(method, path, body);
  }

  /**
   * Whether the log names another key than this instance's: a rotation was recorded (by
   * `rotate-key`) since it started. It then serves reads and refuses writes until restarted.
   */
  get keyRotated(): boolean {
    return this.keyFingerprint !== undefined && this.state.secretKey?.fingerprint !== this.keyFingerprint;
  }

  /** Every write the service takes (once started). */
  get write(): Writes {
    return this.writes!;
  }

  /** A keyed digest of a request, for its Idempotency-Key (once started). */
  fingerprintOf: (method: string, path: string, body: string) => string = () => {
    throw new Error('the service is not started');
  };

  /** A sealed value opened, for a wing that uses a secret itself (a rule's signing key); never answered. */
  openSecret(sealed: string): string | undefined {
    return this.secrets?.tryOpen(sealed as Sealed);
  }

  /** The service's clock: what "now" is for expiry dates and the Idempotency-Key window. */
  now(): Date {
    return this.deps.clock.now();
  }

  /** Who a bearer token stands for, or why it is refused. */
  authenticate(token: string): Principal | Refusal {
    return this.tokenTable!.authenticate(token, this.deps.clock.now());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.feed.closeAll();
    await this.groupCommit.idle();
    await this.projector.stop();
  }

  get state(): ConfigState {
    return this.projector.state;
  }

  /** The event store the log is kept in (the verifiable log reads its leaves from it). */
  get eventStore(): EventStore {
    return this.deps.store;
  }

  /** The stored read models (the verifiable log reads its tree's nodes from them). */
  get readModels(): ReadModelStore {
    return this.deps.readModels;
  }

  get revision(): number {
    return this.projector.revision;
  }

  get(resource: ResourceName, id: number): EntryRecord {
    const col = this.state.collections[resource];
    const entry = col.get(id);
    if (entry) return entry;
    throw col.tombstone(id) ? new Deleted(resource, id) : new NotFound(resource, id);
  }

  /**
   * A read that finds no such entry may have looked at a state behind the store (another instance
   * has just created it, or brought it back): the log is read up to its head, and the read done
   * again, before the 404 is answered.
   */
  async readFresh<T>(read: () => T | Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof NotFound || error instanceof Deleted)) throw error;
      await this.projector.catchUp();
      return read();
    }
  }

  history(resource: ResourceName, id: number): Promise<HistoryItem[]> {
    const col = this.state.collections[resource];
    if (!col.get(id) && !col.tombstone(id)) throw new NotFound(resource, id);
    return this.changes.history(resource, id);
  }

  /**
   * The revision of the log's last event, as the store has it now (one cheap question). Throws when
   * the store does not answer within `timeoutMs`.
   */
  async storeHead(timeoutMs: number): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.deps.store.head(CONFIG_STREAM), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Appends system events while `needed` holds: another instance may have written them first. */
  async writeOnce(events: DomainEvent[], needed: (state: ConfigState) => boolean): Promise<void> {
    await this.groupCommit.submit({
      caller: SYSTEM,
      decide: (state) => (needed(state) ? events : []),
      answer: () => undefined,
    });
  }

  /** A log from before fingerprints were recorded: the key must open its secrets before it is recorded. */
  private async recordLegacyKey(key: Buffer): Promise<void> {
    const sealed = firstSecret(this.state);
    if (sealed !== undefined && this.secrets!.tryOpen(sealed) === undefined) {
      throw new StartRefused(
        'the log holds secrets that this key cannot open: start with the key they were sealed under ' +
          '(secret.key or CONFIG_SECRET_KEY)',
      );
    }
    const recorded = { type: 'SecretKeyRecorded', data: { fingerprint: keyFingerprint(key) } };
    await this.writeOnce([recorded], (state) => !state.secretKey);
  }
}
