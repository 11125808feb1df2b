import { decide } from '../domain/decide.js';
import { evolve } from '../domain/evolve.js';
import { type ResourceName, referenceOrder, resourceOf } from '../domain/resources.js';
import { DomainError, type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import { Journal } from '../engine/journal.js';
import { type PrepareDeps, prepare, type WriteRequest } from './prepare.js';

/** The format name an export carries and an import expects. */
export const EXPORT_FORMAT = 'pmacontrol-config/1';

/** The order entries are imported in: every resource after the ones it references (see referenceOrder). */
export const IMPORT_ORDER: readonly ResourceName[] = referenceOrder();

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
}

/** How an import is decided: for real or as a dry run, and whether the caller may read secrets. */
export interface ImportOptions {
  at: string;
  dryRun: boolean;
  /**
   * The caller may read secrets: a dry run then compares the secrets it is sent with the stored ones
   * (and that comparison is recorded, as SecretsCompared). Otherwise a dry run compares none: an
   * entry that sends a secret counts as updated, so that it never tells whether a secret matches.
   */
  secretsRight: boolean;
  problems: readonly FieldError[];
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
function problemsOf(item: ImportItem, error: unknown): FieldError[] {
  if (error instanceof ValidationFailed) {
    return error.errors.map((e) => ({ ...e, field: itemPath(item.resource, item.index, e.field) }));
  }
  if (error instanceof DomainError) {
    return [{ field: itemPath(item.resource, item.index), code: error.code, message: error.message }];
  }
  throw error;
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
 * Decides a whole import on the state, entry after entry (each sees the ones before it), then undoes
 * that: the writer folds the events again as one batch. Every entry's problems are collected, after
 * the ones found reading the document; any problem refuses the whole import, with all of them listed. A dry run decides everything and
 * records nothing.
 */
export function decideImport(
  items: readonly ImportItem[],
  state: ConfigState,
  deps: PrepareDeps & ImportOptions,
  counts: ImportCounts,
): DomainEvent[] {
  Object.assign(counts, { created: 0, updated: 0, unchanged: 0 });
  const journal = new Journal();
  const events: DomainEvent[] = [];
  const compared: { resource: ResourceName; id: number }[] = [];
  const problems: FieldError[] = [...deps.problems];
  const metadata = { actor: 'import', request_id: 'import', at: deps.at };
  for (const item of items) {
    const mark = journal.mark();
    const existed = state.collections[item.resource].get(item.id) !== undefined;
    const secretSent = deps.dryRun && sendsStoredSecret(item, state);
    if (secretSent && deps.secretsRight) compared.push({ resource: item.resource, id: item.id });
    try {
      const made: DomainEvent[] = [];
      for (const request of requestsFor(item, state)) {
        for (const event of decide(prepare(request, state, deps), state)) {
          evolve(state, { ...event, metadata, revision: state.revision + 1 }, journal);
          made.push(event);
        }
      }
      events.push(...made);
      if (!existed) counts.created++;
      else if (made.length > 0 || (secretSent && !deps.secretsRight)) counts.updated++;
      else counts.unchanged++;
    } catch (error) {
      journal.rollback(mark);
      problems.push(...problemsOf(item, error));
    }
  }
  journal.rollback();
  // A problem found before deciding (a costly check, off the event loop) may be found again here.
  const once = [...new Map(problems.map((p) => [`${p.field}\n${p.code}\n${p.message}`, p])).values()];
  if (once.length > 0) throw new ValidationFailed(once, { listAll: true });
  if (!deps.dryRun) return events;
  return compared.length > 0 ? [{ type: 'SecretsCompared', data: { entries: compared } }] : [];
}
