import { collationKey } from '../domain/shared/collation.js';
import type { ConfigState } from '../domain/state.js';
import { type Name, type Named, type NameIndex, SEARCHED } from './names.js';

/** One entry found: what it is called now, and the name that matched. */
export interface Hit {
  resource: string;
  id: number;
  /** Its name now, or its last one when deleted. */
  label: string;
  deleted: boolean;
  matched: { field: string; value: string; current: boolean };
  rank: number;
}

const ORDER = [...SEARCHED.keys()];

/** An entry's label: its first searched field's value now (a server's display name first), else its last. */
function labelOf(names: readonly Name[], resource: string, state: ConfigState, id: number): string {
  const entry = state.collections[resource as 'servers'].get(id);
  const shown = entry && (entry.display_name ?? entry[SEARCHED.get(resource)![0]]);
  if (typeof shown === 'string' && shown !== '') return shown;
  return names.at(-1)?.value ?? `${resource}/${id}`;
}

/**
 * The entries whose names (now or past) hold `q`, compared as MariaDB's collation compares them
 * (case and accents folded), best first: an exact name, then one that starts with it, then one that
 * holds it — each a current name before a past one, a live entry before a deleted one.
 */
export function search(index: NameIndex, state: ConfigState, q: string, limit: number): Hit[] {
  const key = collationKey(q.trim());
  if (key === '') return [];
  const best = new Map<Named, { name: Name; rank: number }>();
  for (const [known, names] of index.byKey) {
    const fit = known === key ? 3 : known.startsWith(key) ? 2 : known.includes(key) ? 1 : 0;
    if (fit === 0) continue;
    for (const name of names) {
      const rank = fit * 2 + (name.current ? 1 : 0);
      const held = best.get(name.entry);
      if (!held || rank > held.rank) best.set(name.entry, { name, rank });
    }
  }
  const hits: Hit[] = [];
  for (const [entry, { name, rank }] of best) {
    const { resource, id, deleted, names } = entry;
    const matched = { field: name.field, value: name.value, current: name.current && !deleted };
    const label = labelOf(names, resource, state, id);
    hits.push({ resource, id, label, deleted, matched, rank: rank * 2 + (deleted ? 0 : 1) });
  }
  hits.sort((a, b) => b.rank - a.rank || ORDER.indexOf(a.resource) - ORDER.indexOf(b.resource) || a.id - b.id);
  return hits.slice(0, limit);
}
