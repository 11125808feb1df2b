import { evolveEntry } from '../shared/evolve.js';
import type { Created, Deleted, Entry, Updated } from '../shared/types.js';

export interface AliasFields {
  id_mysql_server: number;
  dns: string;
  port: number;
}
export type Alias = Entry<AliasFields>;

export type AliasEvent = Created<'Alias', AliasFields> | Updated<'Alias', AliasFields> | Deleted<'Alias'>;

export const evolve = (entry: Alias | undefined, event: AliasEvent, at: string) => evolveEntry(entry, event, at);
