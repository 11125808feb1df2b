import { evolveEntry } from '../shared/evolve.js';
import type { Created, Deleted, Entry, Updated } from '../shared/types.js';

export interface StorageAreaFields {
  id_ssh_key: number;
  ip: string;
  port: number;
  path: string;
  libelle: string;
  id_geolocalisation_city: number | null;
  id_geolocalisation_country: number | null;
}
export type StorageArea = Entry<StorageAreaFields>;

export type StorageAreaEvent =
  | Created<'StorageArea', StorageAreaFields>
  | Updated<'StorageArea', StorageAreaFields>
  | Deleted<'StorageArea'>;

export const evolve = (entry: StorageArea | undefined, event: StorageAreaEvent, at: string) =>
  evolveEntry(entry, event, at);
