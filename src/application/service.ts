import type { HistoryItem } from '../../projections/history.js';
import { decide } from '../domain/decide.js';
import { genesisEvents } from '../domain/genesis.js';
import { Deleted, NotFound } from '../domain/shared/errors.js';
import type { SecretBox } from '../domain/shared/secrets.js';
import type { DomainEvent, EventMetadata, Resource } from '../domain/shared/types.js';
import { type AnyEntry, entryStream, resourceOfEvent } from '../domain/state.js';
import { type EventStore, StoreUnavailable, WrongExpectedRevision } from '../event-store/port.js';
import { assertLogHolds } from './checkpoint.js';
import { prepare, type WriteRequest } from './prepare.js';
import { assertMatches, keyFingerprint, type RecordedKey, StartRefused } from './secret-key.js';
import { createSecretBox } from './secrets.js';
import { CONFIG_STREAM, Projector } from './projector.js';
import type { ReadModelStore } from './read-models.js';

export interface Clock {
  now(): Date;
}

export interface Caller {
  actor: string;
  requestId: string;
}

export interface WriteResult {
  id: number;
  /** The entry after the write; undefined after a hard delete. */
  entry?: AnyEntry;
  /** False when the write changed nothing and recorded no event. */
  changed: boolean;
}

export interface ServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  /** The key secrets are sealed under, checked against the fingerprint the log recorded (if any). */
  secretKey: (recorded: RecordedKey | undefined) => Buffer;
  clock: Clock;
  /** Called during the start-up catch-up with the position reached, after each batch. */
  onProgress?: (position: number) => void;
  onBackgroundError?: (error: Error) => void;
}

/** How often a write is decided again when another instance appended first. */
const MAX_ATTEMPTS = 25;

/**
 * Handles commands (load, decide, append, wait for the projection) and answers reads from the
 * projected state. Writes are serialised inside an instance; across instances the append's
 * expected revision makes the decision fail and run again on the newer state.
 */
export class ConfigService {
  private readonly projector: Projector;
  private queue: Promise<unknown> = Promise.resolve();
  private secrets?: SecretBox;

  constructor(private readonly deps: ServiceDeps) {
    this.projector = new Projector(deps.store, deps.readModels, deps.onBackgroundError);
  }

  async start(): Promise<void> {
    this.projector.load();
    const checkpoint = { revision: this.projector.revision, digest: this.projector.digest };
    await assertLogHolds(this.deps.store, CONFIG_STREAM, checkpoint, this.deps.readModels.location);
    await this.projector.catchUp(this.deps.onProgress);
    const key = this.deps.secretKey(this.projector.state.secretKey);
    this.secrets = createSecretBox(key);
    if (this.projector.revision === -1) await this.writeOnce(genesisEvents(keyFingerprint(key)));
    else if (!this.projector.state.secretKey) await this.recordLegacyKey(key);
    // Another instance may have written first, with its own key: this one must be the same.
    assertMatches(key, "this instance's key", this.projector.state.secretKey!);
    this.projector.follow(this.deps.onBackgroundError ?? (() => {}));
  }

  /** Appends system events unless another instance appended first (then it wrote the same). */
  private async writeOnce(events: DomainEvent[]): Promise<void> {
    await this.serialised(() =>
      this.append(events, { actor: 'system', requestId: 'genesis' }).catch((error) => {
        if (!(error instanceof WrongExpectedRevision)) throw error;
      }),
    );
    await this.projector.catchUp();
  }

  /** A log from before fingerprints were recorded: the key must open its secrets before it is recorded. */
  private async recordLegacyKey(key: Buffer): Promise<void> {
    const state = this.projector.state;
    const sealed =
      [...state.servers.entries.values()].find((s) => s.passwd)?.passwd ??
      [...state['ssh-keys'].entries.values()].find((k) => k.private_key)?.private_key;
    if (sealed !== undefined) {
      try {
        this.secrets!.open(sealed);
      } catch {
        throw new StartRefused(
          'the log holds secrets that this key cannot open: start with the key they were sealed under (secret.key or CONFIG_SECRET_KEY)',
        );
      }
    }
    await this.writeOnce([{ type: 'SecretKeyRecorded', data: { fingerprint: keyFingerprint(key) } }]);
  }

  async stop(): Promise<void> {
    await this.projector.stop();
    await this.queue.catch(() => {});
  }

  get revision(): number {
    return this.projector.revision;
  }

  list(resource: Resource): AnyEntry[] {
    return [...this.projector.state[resource].entries.values()].sort((a, b) => a.id - b.id) as AnyEntry[];
  }

  get(resource: Resource, id: number): AnyEntry {
    const col = this.projector.state[resource];
    const entry = col.entries.get(id);
    if (entry) return entry as AnyEntry;
    throw col.deleted.has(id) ? new Deleted(resource, id) : new NotFound(resource, id);
  }

  history(resource: Resource, id: number): HistoryItem[] {
    const col = this.projector.state[resource];
    if (!col.entries.has(id) && !col.deleted.has(id)) throw new NotFound(resource, id);
    return this.deps.readModels.history(resource, id);
  }

  execute(resource: Resource, request: WriteRequest, caller: Caller): Promise<WriteResult> {
    return this.serialised(async () => {
      for (let attempt = 1; ; attempt++) {
        await this.projector.catchUp();
        const state = this.projector.state;
        const events = decide(resource, prepare(resource, request, state, this.secrets!), state);
        const id = request.type === 'create' ? ((events[0]?.data as { id?: number } | undefined)?.id ?? 0) : request.id;
        if (events.length > 0) {
          try {
            await this.append(events, caller);
          } catch (error) {
            if (error instanceof WrongExpectedRevision && attempt < MAX_ATTEMPTS) continue;
            if (error instanceof WrongExpectedRevision) throw new StoreUnavailable('too many concurrent writes; retry');
            throw error;
          }
        }
        return {
          id,
          entry: this.projector.state[resource].entries.get(id) as AnyEntry | undefined,
          changed: events.length > 0,
        };
      }
    });
  }

  /** Appends at the revision the state was decided on, then waits until this instance has projected it. */
  private async append(events: DomainEvent[], caller: Caller): Promise<void> {
    const at = this.deps.clock.now().toISOString();
    const expected = this.projector.revision === -1 ? 'no_stream' : this.projector.revision;
    const records = events.map((event) => {
      const resource = resourceOfEvent(event.type);
      const entry = resource && entryStream(resource, (event.data as { id: number }).id);
      return {
        type: event.type,
        data: event.data,
        metadata: { actor: caller.actor, request_id: caller.requestId, at, entry } satisfies EventMetadata,
      };
    });
    await this.deps.store.append(CONFIG_STREAM, records, expected);
    await this.projector.catchUp();
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }
}
