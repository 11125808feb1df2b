import { project } from '../../projections/config.js';
import { type HistoryRow, historyRow } from '../../projections/history.js';
import type { EventMetadata, Resource } from '../domain/shared/types.js';
import { type AnyEntry, type ConfigEvent, type ConfigState, emptyState } from '../domain/state.js';
import type { EventStore, RecordedEvent, Subscription } from '../event-store/port.js';
import { eventDigest } from './checkpoint.js';
import type { EntryChange, ReadModelStore } from './read-models.js';

/** The single stream holding the whole configuration: one consistency boundary (see README). */
export const CONFIG_STREAM = 'pmacontrol-config';
const BATCH = 500;

/** Folds `events` into `state`, returning what changed: the pure part shared by the projector and replay. */
export function foldInto(
  state: ConfigState,
  events: RecordedEvent[],
  history: HistoryRow[],
  touched: Map<string, EntryChange>,
): void {
  for (const event of events) {
    const metadata = event.metadata as unknown as EventMetadata;
    const change = project(state, event as unknown as ConfigEvent, metadata.at);
    if (!change) continue;
    history.push(historyRow(change.resource, change.revision, { ...event, metadata }));
    touched.set(`${change.resource}/${change.id}`, { resource: change.resource, id: change.id });
  }
}

/**
 * Keeps the in-memory configuration and the stored read models at the head of the log. Changes not
 * yet saved stay pending, so a failed save is retried with the next batch instead of being lost.
 */
export class Projector {
  state: ConfigState = emptyState();
  revision = -1;
  /** A digest of the event at `revision`, saved with the checkpoint. */
  digest?: string;
  private pendingEntries = new Map<string, EntryChange>();
  private pendingHistory: HistoryRow[] = [];
  private subscription?: Subscription;

  constructor(
    private readonly store: EventStore,
    private readonly readModels: ReadModelStore,
    /** A failed save does not fail the write that caused it: the log has the events, memory is current. */
    private readonly onSaveError: (error: Error) => void = () => {},
  ) {}

  load(): void {
    ({ state: this.state, revision: this.revision, digest: this.digest } = this.readModels.load());
  }

  /** Reads and applies everything after the current revision. */
  async catchUp(progress?: (position: number) => void): Promise<void> {
    for (;;) {
      const events = await this.store.readStream(CONFIG_STREAM, { fromRevision: this.revision + 1, maxCount: BATCH });
      this.apply(events);
      if (events.length > 0) progress?.(this.revision + 1);
      if (events.length < BATCH) return;
    }
  }

  /** Applies the events that follow the current revision; false if there is a gap before them. */
  apply(events: RecordedEvent[]): boolean {
    const fresh = events.filter((e) => e.revision > this.revision);
    if (fresh.length === 0) return true;
    if (fresh[0].revision !== this.revision + 1) return false;
    foldInto(this.state, fresh, this.pendingHistory, this.pendingEntries);
    const last = fresh[fresh.length - 1];
    this.revision = last.revision;
    this.digest = eventDigest(last);
    this.flush();
    return true;
  }

  private flush(): void {
    const lastIds: Partial<Record<Resource, number>> = {};
    const entries = [...this.pendingEntries.values()].map((change) => {
      const col = this.state[change.resource];
      lastIds[change.resource] = col.lastId;
      return { ...change, entry: col.entries.get(change.id) as AnyEntry | undefined };
    });
    try {
      const batch = { revision: this.revision, digest: this.digest!, entries, lastIds, history: this.pendingHistory };
      this.readModels.save({ ...batch, secretKey: this.state.secretKey });
    } catch (error) {
      this.onSaveError(error as Error);
      return;
    }
    this.pendingEntries = new Map();
    this.pendingHistory = [];
  }

  /** Follows appends made elsewhere (other instances) so that reads here catch up on their own. */
  follow(onError: (error: Error) => void): void {
    this.subscription = this.store.subscribe(
      CONFIG_STREAM,
      this.revision + 1,
      (event) => {
        try {
          if (!this.apply([event])) this.catchUp().catch(onError);
        } catch (error) {
          onError(error as Error);
        }
      },
      onError,
    );
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
  }
}
