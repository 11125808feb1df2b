import { RESOURCE_NAMES, RESOURCES, type ResourceName } from './resources.js';
import { Collection } from './shared/collection.js';

/** The fingerprint of the key secrets are sealed under, as the log last recorded it. */
export interface RecordedKey {
  fingerprint: string;
  at: string;
}

/** The whole configuration: what every decider reads (its rules cross resources) and what GET serves. */
export interface ConfigState {
  /** The revision of the last event folded in; -1 before the first. */
  revision: number;
  collections: { [R in ResourceName]: Collection };
  secretKey?: RecordedKey;
}

export function emptyState(): ConfigState {
  const collections = Object.fromEntries(RESOURCE_NAMES.map((name) => [name, new Collection(RESOURCES[name])]));
  return { revision: -1, collections: collections as ConfigState['collections'] };
}
