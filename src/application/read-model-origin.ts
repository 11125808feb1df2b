import { createHash } from 'node:crypto';
import type { LoggedEvent } from '../domain/shared/types.js';
import { type EventStore, logged } from '../event-store/port.js';
import { StartRefused } from './start-refused.js';

/** What the read models remember of the last event they folded, to recognise their log. */
export interface Origin {
  /** The revision of that event in the configuration stream; -1 before the first. */
  revision: number;
  /** A digest of that event; absent in read models written before digests were kept. */
  digest?: string;
}

/** Identifies one event of one log: its revision, type, data and metadata (request id and time included). */
export const eventDigest = (event: LoggedEvent): string =>
  createHash('sha256')
    .update(`${event.revision}\n${event.type}\n${JSON.stringify(event.data)}\n${JSON.stringify(event.metadata)}`)
    .digest('hex')
    .slice(0, 32);

const REMEDY = [
  'Nothing is served from read models that the log does not hold. Either restore the event log that matches them,',
  'or rebuild the read models from this log with `pmacontrol-config replay --apply` (or `npm run replay -- --apply`):',
  'then only what this log holds is served, and whatever only the read models knew is gone.',
].join('\n');

/**
 * Refuses read models whose origin (the event they were folded up to) the log does not hold: a log that is behind them (deleted,
 * or replaced by an older backup) or another log altogether.
 */
export async function assertLogHolds(
  store: EventStore,
  stream: string,
  origin: Origin,
  readModels: string,
): Promise<void> {
  if (origin.revision < 0) return;
  const [event] = (await store.readStream(stream, { fromRevision: origin.revision, maxCount: 1 })).map(logged);
  if (!event) {
    const [head] = await lastEvent(store, stream, origin.revision);
    const ends = head === undefined ? 'is empty' : `ends at position ${head + 1}`;
    throw new StartRefused(
      `the read models in ${readModels} reached position ${origin.revision + 1}, but the event log (${store.name}) ${ends}:\n` +
        `the log is behind its read models (deleted, or restored from an older backup).\n${REMEDY}`,
    );
  }
  if (origin.digest !== undefined && eventDigest(event) !== origin.digest) {
    throw new StartRefused(
      `the read models in ${readModels} were built from another event log: the event at position ${origin.revision + 1} ` +
        `of this log (${store.name}) is not the one they folded.\n${REMEDY}`,
    );
  }
}

/** The last revision below `before` that the stream holds, found by halving (the port has no backward read). */
async function lastEvent(store: EventStore, stream: string, before: number): Promise<[number | undefined]> {
  let [low, high] = [0, before - 1];
  let found: number | undefined;
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    const [event] = await store.readStream(stream, { fromRevision: middle, maxCount: 1 });
    if (event) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  return [found];
}
