import { type EntryRecord, Table } from '../engine/table.js';
import { COLLECTION_NAMES, type CollectionName, collectionOf } from './resources.js';
import type { UniqueKey } from './shared/declaration.js';

/** One resource's entries in the state, indexed as its declaration says. */
export type Collection = Table<EntryRecord, UniqueKey>;

/** The fingerprint of the key secrets are sealed under, as the log last recorded it. */
export interface RecordedKey {
  fingerprint: string;
  at: string;
}

/** The public half of the key that signs the log's checkpoints, as the log last recorded it (C2SP verifier key). */
export interface RecordedLogKey {
  verifierKey: string;
  at: string;
}

/** The whole configuration: what every decider reads (its rules cross resources) and what GET serves. */
export interface ConfigState {
  /** The revision of the last event folded in; -1 before the first. */
  revision: number;
  collections: { [C in CollectionName]: Collection };
  secretKey?: RecordedKey;
  logKey?: RecordedLogKey;
}

export function emptyState(): ConfigState {
  const collections = Object.fromEntries(COLLECTION_NAMES.map((name) => [name, new Table(collectionOf(name).table)]));
  return { revision: -1, collections: collections as ConfigState['collections'] };
}
