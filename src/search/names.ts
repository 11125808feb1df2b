import type { ChangeItem } from '../application/service.js';
import { CONFIGURATION_NAMES, resourceOf } from '../domain/resources.js';
import { collationKey } from '../domain/shared/collation.js';
import type { FieldSpec } from '../domain/shared/fields.js';
import type { ConfigState } from '../domain/state.js';

type Entry = Record<string, unknown>;

/**
 * The names of every entry of the configuration, now and as they were: each searched field's value
 * (a server's name, display name, ip, hostname; an alias's dns; a libelle; a tag's name …), and every
 * value those fields held before, so that a renamed or deleted entry is found by its old name. Kept in
 * memory: built from the state, followed change by change, its past read from the change log.
 */

/** The fields searched, per resource: those the declarations mark `search`. */
export const SEARCHED: ReadonlyMap<string, readonly string[]> = new Map(
  CONFIGURATION_NAMES.map((name) => {
    const fields = Object.entries(resourceOf(name).declaration.fields) as [string, FieldSpec][];
    return [name, fields.filter(([, spec]) => spec.search && spec.schema.type === 'string').map(([field]) => field)];
  }),
);

/** One value an entry's field holds or held, and the key it is compared by (case and accents folded). */
export interface Name {
  field: string;
  value: string;
  key: string;
  current: boolean;
  entry: Named;
}

export interface Named {
  resource: string;
  id: number;
  names: Name[];
  deleted: boolean;
}

const keyOf = (resource: string, id: number) => `${resource}/${id}`;

export class NameIndex {
  private readonly entries = new Map<string, Named>();
  /**
   * The names by key: a search tests each distinct key once, not each entry's names (a hostname
   * that thousands of servers held is one key; bench/console.ts, the search row).
   */
  readonly byKey = new Map<string, Name[]>();

  get size(): number {
    return this.entries.size;
  }

  values(): IterableIterator<Named> {
    return this.entries.values();
  }

  private named(resource: string, id: number): Named {
    const key = keyOf(resource, id);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { resource, id, names: [], deleted: false };
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** A value the field holds now (`current`) or held before; a value already known keeps its newest standing. */
  add(resource: string, id: number, field: string, value: unknown, current: boolean): void {
    if (typeof value !== 'string' || value === '') return;
    const entry = this.named(resource, id);
    const known = entry.names.find((name) => name.field === field && name.value === value);
    if (current) for (const name of entry.names) if (name.field === field && name !== known) name.current = false;
    if (known) {
      known.current = known.current || current;
      return;
    }
    const name: Name = { field, value, key: collationKey(value), current, entry };
    entry.names.push(name);
    const same = this.byKey.get(name.key);
    if (same) same.push(name);
    else this.byKey.set(name.key, [name]);
  }

  /** Every entry of the state with the values its searched fields hold now. */
  load(state: ConfigState): void {
    for (const [resource, fields] of SEARCHED) {
      for (const entry of state.collections[resource as 'servers'].values()) {
        for (const field of fields) this.add(resource, entry.id, field, entry[field], true);
        if (entry.is_deleted === true) this.named(resource, entry.id).deleted = true;
      }
    }
  }

  /**
   * What a change did to the names: each searched field's value before (past) and after it; `live`
   * (a change folded now): the after values are the current ones and a deletion marks the entry.
   */
  follow(item: Pick<ChangeItem, 'resource' | 'id' | 'type' | 'diff' | 'effects'>, live: boolean): void {
    const touched = [{ resource: item.resource, id: item.id, diff: item.diff }, ...item.effects];
    for (const { resource, id, diff } of touched) {
      const fields = resource === null ? undefined : SEARCHED.get(resource);
      if (!fields || id === null) continue;
      for (const member of diff) {
        if (live && member.field === 'is_deleted') this.named(resource!, id).deleted = member.after === true;
        if (!fields.includes(member.field)) continue;
        this.add(resource!, id, member.field, member.before, false);
        if (member.after !== null) this.add(resource!, id, member.field, member.after, live);
      }
    }
    const { resource, id } = item;
    if (!live || resource === null || id === null || !SEARCHED.has(resource)) return;
    if (item.type === resourceOf(resource).events.deleted && !item.diff.some((m) => m.field === 'is_deleted'))
      this.named(resource, id).deleted = true;
  }

  /** What a fold changed (each entry before and after): the searched fields' values, a deletion. */
  folded(effects: readonly { resource: string; id: number; before?: Entry; after?: Entry }[]): void {
    for (const { resource, id, before, after } of effects) {
      const fields = SEARCHED.get(resource);
      if (!fields) continue;
      for (const field of fields) {
        if (before?.[field] === after?.[field]) continue;
        this.add(resource, id, field, before?.[field], false);
        if (after) this.add(resource, id, field, after[field], true);
      }
      if (!after || before?.is_deleted !== after.is_deleted)
        this.named(resource, id).deleted = !after || after.is_deleted === true;
    }
  }

  /** After the past was read: an entry the state no longer holds is a deleted one. */
  settle(state: ConfigState): void {
    for (const entry of this.entries.values())
      if (!state.collections[entry.resource as 'servers'].get(entry.id)) entry.deleted = true;
  }
}
