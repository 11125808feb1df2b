import type { ConfigState } from '../domain/state.js';
import { tentatively } from '../domain/tentative.js';
import type { EntryRecord } from '../engine/table.js';
import type { ConfigView } from '../http/route-module.js';
import { applyStaged, type Decide, type Failure, type Open, stagedWrites, type Touched } from './staged.js';

/**
 * What a change set makes of the configuration now: the configuration's entries, with those its
 * staged writes touch as they would leave them. A view over the state and the staged writes, never a
 * copy of the configuration: computed again when a write is staged or a fold changes an entry it
 * touches, else kept — writes elsewhere leave it as it is (bench/change-sets.ts, the writes beside).
 */
export interface Overlay {
  staged: number;
  touched: Touched;
  failures: Failure[];
  /** A fold changed an entry it touches since it was computed. */
  stale?: true;
  /**
   * Each resource's entries as a list reads them, made at the first read, then patched by each fold
   * that changes an entry it does not touch (bench/change-sets.ts: the list, the writes beside).
   */
  lists?: Map<string, EntryRecord[]>;
}

/** The overlays kept, per state (a service's), by change set. */
const keptOf = new WeakMap<ConfigState, Map<number, Overlay>>();
/** Overlays kept at most (the most recent ones read). */
const KEPT = 64;

function keptIn(state: ConfigState): Map<number, Overlay> {
  let kept = keptOf.get(state);
  if (!kept) {
    kept = new Map();
    keptOf.set(state, kept);
  }
  return kept;
}

type OverlayDeps = { decide: Decide; open: Open; at: string };

/** The overlay computed now, not kept: inside a decision, the state may hold folds not appended yet. */
export function freshOverlay(state: ConfigState, id: number, deps: OverlayDeps): Overlay {
  const requests = stagedWrites(state, deps.open, id);
  return tentatively(state, deps.at, (fold) => ({
    staged: requests.length,
    ...applyStaged(state, requests, deps.decide, fold),
  }));
}

/** The overlay of a read (outside a decision: the state is as appended), kept while it holds. */
export function overlayOf(state: ConfigState, id: number, deps: OverlayDeps): Overlay {
  const staged = state.collections['change-set-operations'].referencing('change_set', id).size;
  const kept = keptIn(state);
  const known = kept.get(id);
  if (known && !known.stale && known.staged === staged) return known;
  const overlay = freshOverlay(state, id, deps);
  kept.delete(id);
  kept.set(id, overlay);
  if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  return overlay;
}

type Changed = { resource: string; id: number; after?: EntryRecord };

/** The place of `id` in a list in id order: where it is, or where it would go. */
function placeOf(entries: readonly EntryRecord[], id: number): number {
  let [low, high] = [0, entries.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (entries[middle].id < id) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A kept list with an entry it does not touch as the fold left it: replaced, added or removed. */
function patch(entries: EntryRecord[], { id, after }: Changed): void {
  const at = placeOf(entries, id);
  const there = entries[at]?.id === id;
  if (after && there) entries[at] = after;
  else if (after) entries.splice(at, 0, after);
  else if (there) entries.splice(at, 1);
}

/**
 * For the fold (every batch, once appended): the kept overlays that touch an entry it changed are
 * stale; their kept lists take the other entries it changed. A change elsewhere may still make a
 * staged write refused (a name taken since): the diff and the merge decide every staged write again.
 */
export function folded(state: ConfigState, effects: readonly Changed[]): void {
  const kept = keptOf.get(state);
  if (!kept || kept.size === 0) return;
  for (const overlay of kept.values()) {
    if (overlay.stale) continue;
    if (effects.some((effect) => overlay.touched.get(effect.resource)?.has(effect.id))) {
      overlay.stale = true;
      continue;
    }
    for (const effect of effects) {
      const list = overlay.lists?.get(effect.resource);
      if (list) patch(list, effect);
    }
  }
}

/** The entries of a resource in id order, with the touched ones as the overlay leaves them. */
function entriesOf(state: ConfigState, touched: Touched, resource: string): readonly EntryRecord[] {
  const table = state.collections[resource as 'servers'];
  const base = table.inOrder();
  const mine = touched.get(resource);
  if (!mine) return base;
  const entries: EntryRecord[] = [];
  for (const entry of base) {
    if (!mine.has(entry.id)) entries.push(entry);
    else if (mine.get(entry.id)) entries.push(mine.get(entry.id)!);
  }
  // Entries the change set creates (or brings back) are not in the state's list: placed by id.
  const added = [...mine.values()].filter((entry) => entry && !table.get(entry.id)) as EntryRecord[];
  return added.length === 0 ? entries : [...entries, ...added].sort((x, y) => x.id - y.id);
}

/** The configuration as a change set would leave it now (lists and entries read with Change-Set). */
export function viewOf(state: ConfigState, overlay: Overlay): ConfigView {
  return {
    entries: (resource) => {
      if (!overlay.touched.has(resource)) return state.collections[resource as 'servers'].inOrder();
      overlay.lists ??= new Map();
      let entries = overlay.lists.get(resource);
      if (!entries) {
        entries = [...entriesOf(state, overlay.touched, resource)];
        overlay.lists.set(resource, entries);
      }
      return entries;
    },
    get: (resource, id) => {
      const mine = overlay.touched.get(resource);
      return mine?.has(id) ? mine.get(id) : state.collections[resource as 'servers'].get(id);
    },
  };
}
