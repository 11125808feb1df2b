import type { Effect } from '../src/domain/evolve.js';
import { diffedFields, redactData, redactDiff } from '../src/domain/redact.js';
import { type DiffMember, sameValue } from '../src/domain/shared/diff.js';
import type { LoggedEvent } from '../src/domain/shared/types.js';
import { compiledDiffer, type Differ } from '../src/engine/differ.js';
import type { EntryRecord } from '../src/engine/table.js';

/**
 * The change log's read models, folded from each event and the entries it changed: one change row per
 * event, and one version row per entry it changed (with that entry's field-by-field difference).
 * Pure: the same events give the same rows.
 */

export { REDACTED, redactData, redactDiff } from '../src/domain/redact.js';
export type { DiffMember } from '../src/domain/shared/diff.js';

export interface ChangeRow {
  position: number;
  type: string;
  at: string;
  /** The latest `at` up to this event: times made non-decreasing along the log, for time questions. */
  hw_at: string;
  actor: string;
  request_id: string;
  /** The entry the event is about (absent for an event about no entry). */
  resource?: string;
  entry_id?: number;
  /** The event's data, secrets redacted. */
  data: Record<string, unknown>;
}

export interface VersionRow {
  resource: string;
  entry_id: number;
  /** The event's place in the entry's own stream (0: creation). */
  revision: number;
  position: number;
  /** Before and after of every field the event changed; secrets sealed. */
  diff: DiffMember[];
  /** The event hard-deleted the entry. */
  deleted?: true;
  /**
   * The entry did not exist before the event (created, or back after a hard delete): its diff is
   * every field of its snapshot, from nothing, and the read models store the snapshot alone.
   */
  appears?: true;
  /** The whole entry after the event, kept every SNAPSHOT_EVERY revisions and whenever it (re)appears. */
  snapshot?: EntryRecord;
}

/** An entry at any version is its last snapshot plus at most this many diffs. */
export const SNAPSHOT_EVERY = 16;

const differs = new Map<string, Differ>();

/**
 * The diff of one resource's entries: its declared fields, and the soft-delete flag, compiled once
 * per resource (engine/differ.ts; bench/replay.ts: a replay diffs every event).
 */
function differOf(resource: string): Differ {
  let differ = differs.get(resource);
  if (!differ) {
    differ = compiledDiffer(diffedFields(resource), sameValue);
    differs.set(resource, differ);
  }
  return differ;
}

export function diffOf(resource: string, before?: EntryRecord, after?: EntryRecord): DiffMember[] {
  return differOf(resource)(before, after);
}

/** Events that are bookkeeping, not changes: they are in the log, not in the change log. */
const NOT_CHANGES = new Set(['RequestRecorded']);
/** Events in the change log that leave the entry's version where it was (a key rotation's re-seal). */
const NOT_VERSIONS = new Set(['SecretsResealed']);
/**
 * Events about an entry that change nothing in it (a secret read, a break-glass token passing a
 * policy): their data names the entry.
 */
const NAMES_AN_ENTRY: readonly string[] = ['SecretRevealed', 'BreakGlassUsed'];

/**
 * The only events whose change row names an entry that has no version row at the same position.
 * Every other change row's entry is its first effect, which has one: the versions' indexes find
 * those, and the change log indexes these few alone by resource and entry (read-model schema).
 */
export const CHANGES_WITHOUT_VERSION: readonly string[] = [...NOT_VERSIONS, ...NAMES_AN_ENTRY];

/** A request kept for its Idempotency-Key (its answer sealed), as the read models store it. */
export interface RequestRow {
  actor: string;
  key: string;
  fingerprint: string;
  response: string;
  at: string;
  position: number;
}

function requestOf(event: LoggedEvent): { request?: RequestRow } {
  const kept = event.metadata.idempotency;
  if (!kept) return {};
  const { actor, at } = event.metadata;
  return {
    request: {
      actor,
      key: kept.key,
      fingerprint: kept.fingerprint,
      response: kept.response,
      at,
      position: event.revision + 1,
    },
  };
}

/** The rows one event adds; `position` is the event's place in the log (its revision + 1). */
export function rowsOf(
  event: LoggedEvent,
  effects: Effect[],
  highWaterAt: string,
): { change?: ChangeRow; versions: VersionRow[]; request?: RequestRow } {
  if (NOT_CHANGES.has(event.type)) return { versions: [], ...requestOf(event) };
  const position = event.revision + 1;
  const [own] = effects;
  const { actor, request_id, at } = event.metadata;
  // An event about an entry that changes nothing (a secret read) names it in its data.
  const about =
    own ?? (NAMES_AN_ENTRY.includes(event.type) ? { resource: event.data.resource, id: event.data.id } : undefined);
  // Rows made field by field, not by spreading optional parts: a replay makes two per event.
  const data = redactData(own?.resource, event.data);
  const change: ChangeRow = { position, type: event.type, at, hw_at: highWaterAt, actor, request_id, data };
  if (about) {
    change.resource = about.resource as string;
    change.entry_id = about.id as number;
  }
  const versions = (NOT_VERSIONS.has(event.type) ? [] : effects).map((effect) => {
    const { resource, id, revision, before, after } = effect;
    const row: VersionRow = { resource, entry_id: id, revision, position, diff: diffOf(resource, before, after) };
    if (!after) row.deleted = true;
    if (after && !before) row.appears = true;
    // A full copy at every creation (or return after a hard delete), and every SNAPSHOT_EVERY revisions.
    if (after && (!before || revision % SNAPSHOT_EVERY === 0)) row.snapshot = after;
    return row;
  });
  const { request } = requestOf(event);
  return request ? { change, versions, request } : { change, versions };
}

/** One item of an entry's history: the event, and what it changed in that entry. */
export interface HistoryItem {
  position: number;
  revision: number;
  type: string;
  at: string;
  actor: string;
  request_id: string;
  data: Record<string, unknown>;
  diff: DiffMember[];
}

export const historyItem = (change: ChangeRow, version: VersionRow): HistoryItem => ({
  position: change.position,
  revision: version.revision,
  type: change.type,
  at: change.at,
  actor: change.actor,
  request_id: change.request_id,
  data: change.data,
  diff: redactDiff(version.resource, version.diff),
});

/** An entry an event changed in passing (a server that lost a deleted tag), with its diff. */
export interface EffectItem {
  resource: string;
  id: number;
  revision: number;
  diff: DiffMember[];
}

/**
 * One item of the change log: the event as a history item of its own entry, plus the entries it
 * changed in passing. `resource`, `id` and `revision` are null for an event about no entry.
 */
export interface ChangeItem {
  position: number;
  revision: number | null;
  type: string;
  at: string;
  actor: string;
  request_id: string;
  resource: string | null;
  id: number | null;
  data: Record<string, unknown>;
  diff: DiffMember[];
  effects: EffectItem[];
}

/** A change item from its change row and the version rows at its position (secrets redacted). */
export function changeItem(change: ChangeRow, versions: VersionRow[]): ChangeItem {
  const own = versions.find((v) => v.resource === change.resource && v.entry_id === change.entry_id);
  return {
    position: change.position,
    revision: own?.revision ?? null,
    type: change.type,
    at: change.at,
    actor: change.actor,
    request_id: change.request_id,
    resource: change.resource ?? null,
    id: change.entry_id ?? null,
    data: change.data,
    diff: own ? redactDiff(own.resource, own.diff) : [],
    effects: versions
      .filter((v) => v !== own)
      .map((v) => ({
        resource: v.resource,
        id: v.entry_id,
        revision: v.revision,
        diff: redactDiff(v.resource, v.diff),
      })),
  };
}
