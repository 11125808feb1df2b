import { evolveEntry } from '../shared/evolve.js';
import type { Created, Deleted, Entry, Updated } from '../shared/types.js';

export interface ClientFields {
  libelle: string;
  logo: string;
  is_monitored: boolean;
}
export type Client = Entry<ClientFields>;

export type ClientEvent = Created<'Client', ClientFields> | Updated<'Client', ClientFields> | Deleted<'Client'>;

export const evolve = (entry: Client | undefined, event: ClientEvent, at: string) => evolveEntry(entry, event, at);
