import { CONFIGURATION_NAMES, type ResourceName, referenceOrder, resourceOf } from '../domain/resources.js';
import { type DomainError, type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { ConfigState } from '../domain/state.js';
import type { EntryRecord } from '../engine/table.js';
import type { DecidedBatch } from './batch.js';
import type { Changes, Moment } from './changes.js';
import type { WriteRequest } from './prepare.js';

/** The format name an export carries and an import expects. */
export const EXPORT_FORMAT = 'pmacontrol-config/1';

/** The order entries are imported in: every resource after the ones it references (see referenceOrder). */
export const IMPORT_ORDER: readonly ResourceName[] = referenceOrder().filter((name) =>
  CONFIGURATION_NAMES.includes(name),
);

/** One entry of an import document, checked against its resource's schema (secrets in plain text). */
export interface ImportItem {
  resource: ResourceName;
  /** Its place in the document's list, for the problems' field paths. */
  index: number;
  id: number;
  /** Every field, defaults filled in, as a POST or PUT would take them. */
  input: Record<string, unknown>;
  /**
   * Soft-deletable resources, when the document says (`is_deleted`): whether the entry ends deleted.
   * Left out, an existing entry keeps its state (as with PUT) and a new one is live.
   */
  deleted?: boolean;
}

export interface ImportCounts {
  created: number;
  updated: number;
  unchanged: number;
  /** With `skipInvalid`: the problems of the entries left out (and of the document). */
  skipped?: FieldError[];
}

/** How an import is decided: for real or as a dry run, and whether the caller may read secrets. */
export interface ImportOptions {
  dryRun: boolean;
  /**
   * The caller may read secrets: a dry run then compares the secrets it is sent with the stored ones
   * (and that comparison is recorded, as SecretsCompared). Otherwise a dry run compares none: an
   * entry that sends a secret counts as updated, so that it never tells whether a secret matches.
   */
  secretsRight: boolean;
  problems: readonly FieldError[];
  /** Imports the entries that can be, and lists the others in `ImportCounts.skipped`, rather than refusing all. */
  skipInvalid?: boolean;
}

/** Whether the item sends a secret for an entry that has one: what a dry run would compare. */
const sendsStoredSecret = (item: ImportItem, state: ConfigState) => {
  const entry = state.collections[item.resource].get(item.id);
  return resourceOf(item.resource).secretFields.some(
    (field) => typeof item.input[field] === 'string' && typeof entry?.[field] === 'string',
  );
};

/** Where a problem of an entry is reported: `resources.servers[3].ip`. */
export const itemPath = (resource: string, index: number, field?: string) =>
  `resources.${resource}[${index}]${field ? `.${field}` : ''}`;

/** A refusal of one entry as problems with their paths in the document. */
function problemsOf(item: ImportItem, error: DomainError): FieldError[] {
  if (error instanceof ValidationFailed) {
    return error.errors.map((e) => ({ ...e, field: itemPath(item.resource, item.index, e.field) }));
  }
  return [{ field: itemPath(item.resource, item.index), code: error.code, message: error.message }];
}

/** The commands one entry needs: created or replaced (restored first if it comes back), then deleted if it ends so. */
function requestsFor(item: ImportItem, state: ConfigState): WriteRequest[] {
  const current = state.collections[item.resource].get(item.id);
  const base = { resource: item.resource, id: item.id, input: item.input } as const;
  const restore = item.deleted === false && current?.is_deleted === true;
  const write = (current ? { ...base, kind: 'patch', restore } : { ...base, kind: 'create' }) as WriteRequest;
  const deleteIt = item.deleted === true && current?.is_deleted !== true;
  return deleteIt ? [write, { kind: 'delete', resource: item.resource, id: item.id } as WriteRequest] : [write];
}

/**
 * Decides a whole import on the state, entry after entry (each sees the ones before it), as one
 * batch. Every entry's problems are collected, after the ones found reading the document. Any
 * problem refuses the whole import, with all of them listed; with `skipInvalid`, the entries refused
 * are left out and listed in `counts.skipped` instead, and the others are imported. A dry run
 * decides everything and records nothing but the secrets it compared.
 */
export function decideImport(items: readonly ImportItem[], batch: DecidedBatch, deps: ImportOptions): ImportCounts {
  const counts: ImportCounts = { created: 0, updated: 0, unchanged: 0 };
  if (deps.skipInvalid) counts.skipped = [];
  const { state } = batch;
  const compared: { resource: ResourceName; id: number }[] = [];
  const problems: FieldError[] = [...deps.problems];
  for (const item of items) {
    const existed = state.collections[item.resource].get(item.id) !== undefined;
    const secretSent = deps.dryRun && sendsStoredSecret(item, state);
    let changed = false;
    const refusal = batch.unit(() => {
      for (const request of requestsFor(item, state)) changed = batch.apply(request).length > 0 || changed;
    });
    if (refusal) {
      problems.push(...problemsOf(item, refusal));
      continue;
    }
    if (secretSent && deps.secretsRight) compared.push({ resource: item.resource, id: item.id });
    if (!existed) counts.created++;
    else if (changed || (secretSent && !deps.secretsRight)) counts.updated++;
    else counts.unchanged++;
  }
  // A problem found before deciding (a costly check, off the event loop) may be found again here.
  const once = [...new Map(problems.map((p) => [`${p.field}\n${p.code}\n${p.message}`, p])).values()];
  if (counts.skipped) counts.skipped.push(...once);
  else if (once.length > 0) throw new ValidationFailed(once, { listAll: true });
  if (deps.dryRun) {
    batch.discard();
    if (compared.length > 0) batch.note({ type: 'SecretsCompared', data: { entries: compared } });
  }
  return counts;
}

/** Entries per piece of an export: a piece is made in well under a millisecond. */
const PIECE = 256;

/** Where an export reads the configuration: now from memory, at a moment from the change log. */
export interface ExportSource {
  readonly state: ConfigState;
  readonly revision: number;
  readonly changes: Changes;
}

type Snapshot = { position: number; at: string | null; lists: (readonly [ResourceName, readonly EntryRecord[]])[] };

/** Told how many entries were written so far, out of how many. */
export type ExportProgress = (done: number, total: number) => void;

/**
 * The whole configuration as it is (or was, at a moment), as an export document piece by piece, each
 * entry as `present` writes it. Every list is one state: now, taken in one step from memory (writes
 * that land while it is sent do not show); or at a moment, read from the change log, where the past
 * does not move.
 */
export async function* exportPieces(
  source: ExportSource,
  moment: Moment | undefined,
  present: (resource: ResourceName, entry: EntryRecord) => string,
  progress?: ExportProgress,
): AsyncIterable<string> {
  let snapshot: Snapshot;
  if (moment === undefined) {
    const lists = CONFIGURATION_NAMES.map((name) => [name, source.state.collections[name].inOrder()] as const);
    const position = source.revision + 1;
    snapshot = { position, at: (await source.changes.resolve({ position })).at, lists };
  } else {
    const { position, at } = await source.changes.resolve(moment);
    const lists: Snapshot['lists'] = [];
    for (const name of CONFIGURATION_NAMES)
      lists.push([name, (await source.changes.listAt(name, { position })).entries]);
    snapshot = { position, at, lists };
  }
  yield* pieces(snapshot, present, progress);
}

function* pieces(
  { position, at, lists }: Snapshot,
  present: (r: ResourceName, e: EntryRecord) => string,
  progress?: ExportProgress,
) {
  const total = lists.reduce((sum, [, entries]) => sum + entries.length, 0);
  let done = 0;
  yield `{"format":${JSON.stringify(EXPORT_FORMAT)},"position":${position},"at":${JSON.stringify(at)},"resources":{`;
  for (const [index, [name, entries]] of lists.entries()) {
    yield `${index > 0 ? ',' : ''}${JSON.stringify(name)}:[`;
    for (let start = 0; start < entries.length; start += PIECE) {
      const piece = entries.slice(start, start + PIECE).map((entry) => present(name, entry));
      yield `${start > 0 ? ',' : ''}${piece.join(',')}`;
      done += piece.length;
      progress?.(done, total);
    }
    yield ']';
  }
  yield '}}\n';
}
