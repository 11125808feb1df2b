import type { ConfigService } from '../application/service.js';
import { type ResourceName, resourceOf } from '../domain/resources.js';
import { KEPT, keptOf } from './rows.js';
import type { Touched } from './table-writes.js';

/**
 * The entries the events after `after` touched (themselves and what they changed in passing), the
 * fields each changed (null: the whole row — a creation), those created, and the position reached
 * (at most `batch` events); after nothing (0), every entry, whole.
 */
export async function touchedSince(
  service: ConfigService,
  after: number,
  head: number,
  batch: number,
): Promise<{ touched: Touched; created: Set<string>; position: number }> {
  const touched: Touched = new Map();
  const created = new Set<string>();
  /** The fields changed of an entry, added to those before; null (the whole row) stays null. */
  const add = (resource: string, id: number, fields: readonly string[] | null) => {
    if (!keptOf(resource as ResourceName)) return;
    const ids = touched.get(resource as ResourceName) ?? new Map<number, ReadonlySet<string> | null>();
    touched.set(resource as ResourceName, ids);
    const before = ids.get(id);
    if (before === null) return;
    ids.set(id, fields === null ? null : new Set([...(before ?? []), ...fields]));
  };
  if (after === 0) {
    for (const kept of KEPT)
      for (const entry of service.state.collections[kept.name].values()) add(kept.name, entry.id, null);
    return { touched, created, position: head };
  }
  let count = 0;
  for await (const item of service.changes.changes({ after, before: head + 1, order: 'asc', admin: false })) {
    // An event that changed no entry (a secret read) has no revision: nothing to write.
    if (item.resource && item.id !== null && item.revision !== null) {
      const creation = item.type === resourceOf(item.resource as ResourceName).events.created;
      if (creation) created.add(`${item.resource}/${item.id}`);
      add(item.resource, item.id, creation ? null : item.diff.map((member) => member.field));
    }
    for (const effect of item.effects)
      add(
        effect.resource,
        effect.id,
        effect.diff.map((member) => member.field),
      );
    if (++count >= batch) return { touched, created, position: item.position };
  }
  return { touched, created, position: head };
}
