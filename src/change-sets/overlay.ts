import type { ConfigState } from '../domain/state.js';
import { tentatively } from '../domain/tentative.js';
import type { EntryRecord } from '../engine/table.js';
import type { ConfigView } from '../http/route-module.js';
import { applyStaged, type Decide, type Failure, type Open, stagedWrites, type Touched } from './staged.js';

/**
 * What a change set makes of the configuration now: the configuration's entries, with those its
 * staged writes touch as they would leave them. A view over the state and the staged writes, never a
 * copy of the configuration: computed again when the log moves or a write is staged, else kept.
 */
export interface Overlay {
  revision: number;
  staged: number;
  touched: Touched;
  failures: Failure[];
}

const kept = new Map<number, Overlay>();
/** Overlays kept at most (the most recent ones read). */
const KEPT = 64;

type OverlayDeps = { decide: Decide; open: Open; at: string };

/** The overlay computed now, not kept: inside a decision, the state may hold folds not appended yet. */
export function freshOverlay(state: ConfigState, id: number, deps: OverlayDeps): Overlay {
  const requests = stagedWrites(state, deps.open, id);
  return tentatively(state, deps.at, (fold) => ({
    revision: state.revision,
    staged: requests.length,
    ...applyStaged(state, requests, deps.decide, fold),
  }));
}

/** The overlay of a read: kept until the log moves or a write is staged (the state is then as appended). */
export function overlayOf(state: ConfigState, id: number, deps: OverlayDeps): Overlay {
  const staged = state.collections['change-set-operations'].referencing('change_set', id).size;
  const known = kept.get(id);
  if (known && known.revision === state.revision && known.staged === staged) return known;
  const overlay = freshOverlay(state, id, deps);
  kept.delete(id);
  kept.set(id, overlay);
  if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  return overlay;
}

/** The entries of a resource in id order, with the touched ones as the overlay leaves them. */
function entriesOf(state: ConfigState, touched: Touched, resource: string): readonly EntryRecord[] {
  const base = state.collections[resource as 'servers'].inOrder();
  const mine = touched.get(resource);
  if (!mine) return base;
  const entries = base.filter((entry) => !mine.has(entry.id));
  let added = false;
  for (const entry of mine.values()) {
    if (!entry) continue;
    entries.push(entry);
    added = true;
  }
  return added ? entries.sort((a, b) => a.id - b.id) : entries;
}

/** The configuration as a change set would leave it now (lists and entries read with Change-Set). */
export function viewOf(state: ConfigState, overlay: Overlay): ConfigView {
  return {
    entries: (resource) => entriesOf(state, overlay.touched, resource),
    get: (resource, id) => {
      const mine = overlay.touched.get(resource);
      return mine?.has(id) ? mine.get(id) : state.collections[resource as 'servers'].get(id);
    },
  };
}
