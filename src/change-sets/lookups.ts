import type { ConfigService } from '../application/service.js';
import type { ResourceName } from '../domain/resources.js';
import type { EntryRecord } from '../engine/table.js';
import { type Bases, keyOf } from './merge.js';
import type { Touched } from './staged.js';
import type { MergedEntry } from './steps.js';

/** Past this many entries of one resource, its whole list at base is read once rather than each entry. */
const ONE_BY_ONE = 50;

/** The touched entries as they were at `base` (undefined: none then), read from the change log. */
export async function basesOf(service: ConfigService, base: number, touched: Touched): Promise<Bases> {
  const bases: Bases = new Map();
  const at = { position: base };
  for (const [resource, entries] of touched) {
    const name = resource as ResourceName;
    if (entries.size > ONE_BY_ONE) {
      const then = base === 0 ? [] : (await service.changes.listAt(name, at)).entries;
      const byId = new Map(then.map((entry) => [entry.id, entry]));
      for (const id of entries.keys()) bases.set(keyOf(resource, id), byId.get(id));
      continue;
    }
    for (const id of entries.keys()) {
      const then = base === 0 ? undefined : await service.changes.entryAt(name, id, at).catch(() => undefined);
      bases.set(keyOf(resource, id), then?.entry);
    }
  }
  return bases;
}

/** The entries a merge touched (its request's events, each entry's first and last revision in it), and their values. */
export async function mergedEntries(service: ConfigService, requestId: string): Promise<MergedEntry[]> {
  const touched = new Map<string, MergedEntry>();
  const seen = (resource: string | null, id: number | null, revision: number | null) => {
    if (resource === null || id === null || revision === null || resource.startsWith('change-set')) return;
    const key = keyOf(resource, id);
    const known = touched.get(key);
    if (!known) touched.set(key, { resource, id, before: revision, after: revision + 1 });
    else {
      known.before = Math.min(known.before, revision);
      known.after = Math.max(known.after, revision + 1);
    }
  };
  for await (const item of service.changes.changes({ request_id: requestId, order: 'asc', admin: true })) {
    seen(item.resource, item.id, item.revision);
    for (const effect of item.effects) seen(effect.resource, effect.id, effect.revision);
  }
  const entries = [...touched.values()];
  for (const entry of entries) {
    const name = entry.resource as ResourceName;
    if (entry.before > 0) entry.valuesBefore = await service.changes.versionOf(name, entry.id, entry.before);
    entry.valuesAfter = (await service.changes.versionOf(name, entry.id, entry.after)) as EntryRecord | undefined;
  }
  return entries;
}
