import type { EntryRecord } from '../engine/table.js';

/** A list request: filters (AND between fields, OR between values of one field), search, order, page. */
export interface ListQuery {
  /** `field=value`: the entry's field equals one of the values (text compared case-insensitively). */
  equals: { field: string; values: unknown[] }[];
  /** `tag=3`: the entry's list field holds every one of these ids. */
  holds: { field: string; ids: number[] }[];
  /** Case-insensitive substring of any of `searched`. */
  q?: { text: string; searched: readonly string[] };
  sort: { field: string; descending: boolean }[];
  offset: number;
  limit?: number;
}

const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);

function matches(query: ListQuery): (entry: EntryRecord) => boolean {
  const equals = query.equals.map(({ field, values }) => ({ field, values: new Set(values.map(lower)) }));
  const text = query.q?.text.toLowerCase();
  return (entry) =>
    equals.every(({ field, values }) => values.has(lower(entry[field] ?? null))) &&
    query.holds.every(({ field, ids }) => ids.every((id) => (entry[field] as number[]).includes(id))) &&
    (text === undefined ||
      query.q!.searched.some((field) =>
        String(entry[field] ?? '')
          .toLowerCase()
          .includes(text),
      ));
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() < b.toLowerCase() ? -1 : 1;
  return (a as number) < (b as number) ? -1 : 1;
}

function order(sort: ListQuery['sort']): (a: EntryRecord, b: EntryRecord) => number {
  return (a, b) => {
    for (const { field, descending } of sort) {
      const result = compare(a[field], b[field]);
      if (result !== 0) return descending ? -result : result;
    }
    return a.id - b.id;
  };
}

/**
 * The entries a list request asks for among `all` (in id order), and how many match before the page
 * is cut. Without filters or sort, `all` is used as it is: no copy, no sort per request.
 */
export function selectEntries(
  all: readonly EntryRecord[],
  query: ListQuery,
): { items: readonly EntryRecord[]; total: number } {
  const filtered = query.equals.length || query.holds.length || query.q;
  const matching = filtered ? all.filter(matches(query)) : all;
  const sorted = query.sort.length > 0 ? [...matching].sort(order(query.sort)) : matching;
  const end = query.limit === undefined ? undefined : query.offset + query.limit;
  const items = query.offset === 0 && end === undefined ? sorted : sorted.slice(query.offset, end);
  return { items, total: matching.length };
}
