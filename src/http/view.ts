import type { EntryRecord } from '../engine/table.js';

/**
 * The configuration as something other than the state now shows it (a change set applied): what the
 * configuration's list and entry reads answer from when a module's `view` gives one for a request.
 */
export interface ConfigView {
  /** A resource's entries, in id order (soft-deleted ones included, as the state keeps them). */
  entries(resource: string): readonly EntryRecord[];
  /** One entry, or undefined when the view holds none (never created, or hard-deleted in it). */
  get(resource: string, id: number): EntryRecord | undefined;
}
