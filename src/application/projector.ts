import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ChangeRow, type RequestRow, rowsOf, type VersionRow } from '../../projections/changes.js';
import { type Effect, evolve } from '../domain/evolve.js';
import type { CollectionName } from '../domain/resources.js';
import { CONFIG_STREAM, type LoggedEvent } from '../domain/shared/types.js';
import { type ConfigState, emptyState } from '../domain/state.js';
import { Journal } from '../engine/journal.js';
import { Frontier, type Hash, type NewNode } from '../engine/merkle.js';
import { type EventStore, logged, type Subscription } from '../event-store/port.js';
import type { EntryState, ReadModelStore } from '../read-models/port.js';
import { eventDigest } from './read-model-origin.js';

const BATCH = 1000;
/**
 * Folded rows wait at most this long, or until there are this many, before they are handed to the
 * store in one batch, instead of one per write (the SQLite store then writes the batches of half a
 * second in one transaction: see SAVE_HOLD_MS). Memory (which GET routes serve) is always current;
 * queries on the stored read models hand over what waits first (see Changes), and rows lost to a crash
 * are folded again from the log at start-up.
 */
const SAVE_MS = 100;
const SAVE_ROWS = 5000;

/** One event as projected: what it changed, and the rows it added to the change log. */
export interface Projected {
  event: LoggedEvent;
  effects: Effect[];
  /** Absent for bookkeeping events, which are not changes (RequestRecorded). */
  change?: ChangeRow;
  versions: VersionRow[];
  /** The request it closed, when that was sent with an Idempotency-Key. */
  request?: RequestRow;
}

export type Listener = (projected: Projected[]) => void;

/**
 * The leaf hash of an event in the Merkle tree the read models keep over the log: the verifiable
 * log's wing (src/log/) says what a leaf is; every projector over one store must be given the same.
 */
export type LeafOf = (event: LoggedEvent) => Hash;

/** Rows folded and not yet handed to the store (which keeps and retries a save that fails). */
class Pending {
  /** Events were folded since the last save (a bookkeeping event adds no row but moves the origin). */
  dirty = false;
  rows = 0;
  entries = new Map<string, EntryState>();
  changes: ChangeRow[] = [];
  versions: VersionRow[] = [];
  requests: RequestRow[] = [];
  nodes: NewNode[] = [];

  add(state: ConfigState, projected: Projected, nodes: NewNode[]): void {
    this.dirty = true;
    this.rows += projected.effects.length + projected.versions.length + 1;
    for (const node of nodes) this.nodes.push(node);
    for (const { resource, id } of projected.effects) {
      const col = state.collections[resource];
      this.entries.set(`${resource}/${id}`, { resource, id, entry: col.get(id), tombstone: col.tombstone(id) });
    }
    if (projected.change) this.changes.push(projected.change);
    this.versions.push(...projected.versions);
    if (projected.request) this.requests.push(projected.request);
  }

  lastIds(state: ConfigState): Partial<Record<CollectionName, number>> {
    const ids: Partial<Record<CollectionName, number>> = {};
    for (const { resource } of this.entries.values()) ids[resource] = state.collections[resource].lastId;
    return ids;
  }
}

/**
 * Keeps the configuration (in memory) and the stored read models at the head of the log. A batch of
 * events is folded whole or not at all: an event the state cannot take undoes the ones before it.
 */
export class Projector {
  state: ConfigState = emptyState();
  /** A digest of the event at `revision`, saved with the origin. */
  digest?: string;
  /** The latest event time so far: the change log's times made non-decreasing, for time questions. */
  highWaterAt = '';
  /** The right edge of the Merkle tree over the log: one leaf per event folded (see LeafOf). */
  tree = new Frontier();
  private pending = new Pending();
  private readonly listeners: Listener[] = [];
  private subscription?: Subscription;
  private saveTimer?: NodeJS.Timeout;
  /** While the stored read models are refilled from the log (see restore), folded rows are kept here. */
  private holding = false;

  constructor(
    private readonly store: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly leafOf: LeafOf,
    /** A failed save does not fail the write that caused it: the log has the events, memory is current. */
    private readonly onSaveError: (error: Error) => void = () => {},
  ) {}

  get revision(): number {
    return this.state.revision;
  }

  /** Called with every batch once it is folded (caches, live feeds). */
  listen(listener: Listener): void {
    this.listeners.push(listener);
  }

  load(): void {
    const stored = this.readModels.load();
    ({ state: this.state, digest: this.digest, frontier: this.tree } = stored);
    this.highWaterAt = stored.highWaterAt ?? '';
  }

  /** Reads and folds everything after the current revision (up to `upTo`, a revision, if given). */
  async catchUp(progress?: (position: number) => void, upTo = Number.POSITIVE_INFINITY): Promise<void> {
    while (this.revision < upTo) {
      const maxCount = Math.min(BATCH, upTo - this.revision);
      const events = await this.store.readStream(CONFIG_STREAM, { fromRevision: this.revision + 1, maxCount });
      this.apply(events.map(logged));
      if (events.length > 0) progress?.(this.revision + 1);
      if (events.length < maxCount) return;
    }
  }

  /**
   * Folds the events that follow the current revision, all or none; those already folded are
   * skipped. False, with nothing folded, when there is a gap before them.
   */
  apply(events: LoggedEvent[]): boolean {
    const fresh = events.filter((e) => e.revision > this.revision);
    if (fresh.length === 0) return true;
    if (fresh[0].revision !== this.revision + 1) return false;
    const journal = new Journal();
    const projected: Projected[] = [];
    const nodes: NewNode[][] = [];
    const tree = this.tree.copy();
    let highWaterAt = this.highWaterAt;
    try {
      for (const event of fresh) {
        const effects = evolve(this.state, event, journal);
        if (event.metadata.at > highWaterAt) highWaterAt = event.metadata.at;
        projected.push({ event, effects, ...rowsOf(event, effects, highWaterAt) });
        nodes.push(tree.append(this.leafOf(event)));
      }
    } catch (error) {
      journal.rollback();
      throw error;
    }
    this.digest = eventDigest(fresh[fresh.length - 1]);
    this.subscription?.skipTo?.(this.revision + 1);
    this.highWaterAt = highWaterAt;
    this.tree = tree;
    for (let i = 0; i < projected.length; i++) this.pending.add(this.state, projected[i], nodes[i]);
    if (this.pending.rows >= SAVE_ROWS) this.flush();
    else this.saveLater();
    for (const listener of this.listeners) listener(projected);
    return true;
  }

  /** Hands what was folded to the store, which saves it (the SQLite one from a worker thread). */
  flush(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const pending = this.pending;
    if (!pending.dirty || this.holding) return;
    this.pending = new Pending();
    const batch = {
      revision: this.revision,
      digest: this.digest!,
      highWaterAt: this.highWaterAt,
      entries: [...pending.entries.values()],
      lastIds: pending.lastIds(this.state),
      secretKey: this.state.secretKey,
      logKey: this.state.logKey,
      nodes: pending.nodes,
      edge: this.tree.edge(),
      changes: pending.changes,
      versions: pending.versions,
      requests: pending.requests,
    };
    this.readModels.save(batch, this.onSaveError);
  }

  /**
   * Refills the stored read models, emptied after damage was found (ReadModelStore.reset), from the
   * log up to the revision folded here; memory, which plain reads serve, is untouched. A second
   * projector folds the log into them while this one goes on folding writes and holds its own saves
   * back; once the second has reached this one, what this one holds is what the second saved, and
   * its saves follow on from there. Should it fail (the log unreadable), this one goes on holding,
   * and `restore` can be called again: the second starts over, and its saves skip what the store
   * already has.
   */
  async restore(): Promise<void> {
    this.holding = true;
    const second = new Projector(this.store, this.readModels, this.leafOf, this.onSaveError);
    second.load();
    // Compared with no wait in between: the apply that reaches this revision is the last.
    while (second.revision < this.revision) {
      const maxCount = Math.min(BATCH, this.revision - second.revision);
      const events = await this.store.readStream(CONFIG_STREAM, { fromRevision: second.revision + 1, maxCount });
      if (events.length === 0) throw new Error(`the log ends at ${second.revision}, before ${this.revision}`);
      second.apply(events.map(logged));
      await nextTurn(); // a long log is read without holding the event loop
    }
    second.flush();
    this.pending = new Pending();
    this.holding = false;
  }

  private saveLater(): void {
    this.saveTimer ??= setTimeout(() => this.flush(), SAVE_MS).unref();
  }

  /** Follows appends made elsewhere (other instances) so that reads here catch up on their own. */
  follow(onError: (error: Error) => void): void {
    this.subscription = this.store.subscribe(
      CONFIG_STREAM,
      this.revision + 1,
      (event) => {
        try {
          if (!this.apply([logged(event)])) this.catchUp().catch(onError);
        } catch (error) {
          onError(error as Error);
        }
      },
      onError,
    );
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    this.flush();
  }
}
