import { evolveEntry } from '../shared/evolve.js';
import type { Created, Deleted, Entry, Updated } from '../shared/types.js';

export interface TagFields {
  name: string;
  color: string;
  background: string;
}
export type Tag = Entry<TagFields>;

export type TagEvent = Created<'Tag', TagFields> | Updated<'Tag', TagFields> | Deleted<'Tag'>;

export const evolve = (entry: Tag | undefined, event: TagEvent, at: string) => evolveEntry(entry, event, at);
