import type { ConfigService, ParseWrite } from '../application/service.js';
import type { WriteRequest } from '../application/writes.js';
import type { ResourceName } from '../domain/resources.js';
import { sameValue } from '../domain/shared/diff.js';
import { DomainError, type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import { MAX_ID } from '../domain/shared/types.js';
import type { EntryRecord } from '../engine/table.js';
import { Turns } from '../engine/turns.js';
import type { PmaControlDatabase } from './database.js';
import { KEPT, type Kept, type Row } from './rows.js';
import { documentFromTablesPaced, type PmaControlTables, TABLES } from './tables.js';

/**
 * Drift: what PmaControl's tables say that the configuration does not, once the projection has
 * written what it knows. Rows changed by PmaControl itself (its pages) are read back the way
 * `import-pmacontrol` reads them and compared field by field with the entries; the entries that
 * changed since the position applied are not compared (that is lag, not drift). An admin adopts a
 * difference (recorded as a change, actor `pmacontrol`) or overwrites it with the service's value.
 */

/** One difference: a column of a row, or a whole row (`column` null) that only one side has. */
export interface DriftItem {
  table: string;
  id: number;
  /** The field (PmaControl's column of the same name; a list of ids: its link table). */
  column: string | null;
  /** This service's value; for a whole row, `"row"` or null. Secrets are `[redacted]`. */
  service: unknown;
  pmacontrol: unknown;
}

export interface DriftReport {
  /** The position applied to PmaControl's tables when they were read. */
  position: number;
  checked_at: string;
  items: DriftItem[];
}

/** Which differences an adopt or an overwrite takes: some, or all of them. */
export type DriftSelection = { all: true } | { items: { table: string; id: number; column: string | null }[] };

export interface DriftDeps {
  service: ConfigService;
  database: PmaControlDatabase;
  /** Opens PmaControl's ciphertexts (remembering those already opened). */
  decrypt: (ciphertext: string) => string;
  /** The entries changed since a position: not compared. */
  changedSince(position: number): Promise<Set<string>>;
}

const REDACTED = '[redacted]';
const key = (resource: string, id: number) => `${resource}/${id}`;

/** A drift read: the report, and each PmaControl row as the entry it would be (for adopt). */
export interface Drift {
  report: DriftReport;
  /** By `resource/id`: the row's fields as a write would take them, or why the row cannot be read. */
  rows: Map<string, { input?: Row; deleted?: boolean; problems?: FieldError[] }>;
}

async function readAll(database: PmaControlDatabase): Promise<PmaControlTables> {
  const tables: PmaControlTables = {};
  for (const table of TABLES) tables[table] = await database.rows(table);
  return tables;
}

/** The row of `kept` read back as the fields a write takes, checked as a POST would check them. */
function readBack(
  kept: Kept,
  row: Row,
  parse: ParseWrite,
): { input?: Row; deleted?: boolean; problems?: FieldError[] } {
  const { id: _id, is_deleted: deleted, ...fields } = row;
  try {
    return { input: parse(kept.name, 'create', fields), deleted: deleted === true };
  } catch (error) {
    if (error instanceof ValidationFailed) return { problems: error.errors };
    if (error instanceof DomainError) return { problems: [{ field: '', code: error.code, message: error.message }] };
    throw error;
  }
}

/** The differences of one entry and its row (both present). */
function compare(kept: Kept, entry: EntryRecord, read: ReturnType<typeof readBack>, open: (s: Sealed) => unknown) {
  const items: DriftItem[] = [];
  const base = { table: kept.table.table, id: entry.id };
  for (const problem of read.problems ?? []) {
    items.push({ ...base, column: problem.field || null, service: null, pmacontrol: `unreadable: ${problem.message}` });
  }
  if (!read.input) return items;
  for (const [field, spec] of Object.entries(kept.resource.declaration.fields)) {
    if (spec.derived) continue; // made again from the other fields (an SSH key's type, bit, fingerprint)
    const theirs = read.input[field];
    if (spec.secret) {
      const ours = typeof entry[field] === 'string' && entry[field] !== '' ? open(entry[field] as Sealed) : undefined;
      if ((ours ?? '') !== (theirs ?? ''))
        items.push({ ...base, column: field, service: REDACTED, pmacontrol: REDACTED });
    } else if (!sameValue(entry[field] ?? null, theirs ?? null)) {
      items.push({ ...base, column: field, service: entry[field] ?? null, pmacontrol: theirs ?? null });
    }
  }
  if (kept.resource.declaration.deletion === 'soft' && (entry.is_deleted === true) !== read.deleted) {
    items.push({
      ...base,
      column: 'is_deleted',
      service: entry.is_deleted === true,
      pmacontrol: read.deleted === true,
    });
  }
  return items;
}

/**
 * Reads PmaControl's tables and compares them with the entries, a slice at a time (12,000 servers
 * never hold the event loop: bench/pmacontrol.ts, the concurrent /healthz).
 */
export async function findDrift(deps: DriftDeps, parse: ParseWrite): Promise<Drift> {
  const { service, database, decrypt } = deps;
  const { position } = await database.state();
  const changed = await deps.changedSince(position);
  const turns = new Turns();
  const pause = () => turns.pause();
  const { document, problems } = await documentFromTablesPaced(await readAll(database), decrypt, pause);
  const unreadable = new Map<string, FieldError[]>();
  for (const p of problems) {
    const kept = KEPT.find((k) => k.table.table === p.table);
    if (kept)
      unreadable.set(key(kept.name, Number(p.id)), [{ field: p.field, code: 'unreadable', message: p.message }]);
  }
  const open = (sealed: Sealed) => service.write.openSealed(sealed);
  const items: DriftItem[] = [];
  const rows: Drift['rows'] = new Map();
  for (const kept of KEPT) {
    const theirs = new Map((document.resources[kept.name] ?? []).map((row) => [Number(row.id), row]));
    const ids = new Set([...theirs.keys(), ...[...service.state.collections[kept.name].values()].map((e) => e.id)]);
    for (const id of [...ids].sort((a, b) => a - b)) {
      await pause();
      if (changed.has(key(kept.name, id))) continue;
      const entry = service.state.collections[kept.name].get(id);
      const row = theirs.get(id);
      const read = unreadable.get(key(kept.name, id))
        ? { problems: unreadable.get(key(kept.name, id)) }
        : row && readBack(kept, row, parse);
      if (read) rows.set(key(kept.name, id), read);
      const base = { table: kept.table.table, id };
      // Before anything was applied, an entry without its row is not drift: the first write inserts it.
      if (!row && position !== 0) items.push({ ...base, column: null, service: 'row', pmacontrol: null });
      else if (!row) continue;
      else if (!entry) items.push({ ...base, column: null, service: null, pmacontrol: 'row' });
      else items.push(...compare(kept, entry, read!, open));
    }
  }
  return { report: { position, checked_at: new Date().toISOString(), items }, rows };
}

/** The differences a selection names (each must be one of the report's). */
export function selected(report: DriftReport, selection: DriftSelection): DriftItem[] {
  if ('all' in selection) return report.items;
  const wanted = new Set(selection.items.map((i) => `${i.table}/${i.id}/${i.column ?? ''}`));
  const found = report.items.filter((i) => wanted.has(`${i.table}/${i.id}/${i.column ?? ''}`));
  if (found.length !== wanted.size) {
    throw new ValidationFailed([
      { field: 'items', code: 'not_drift', message: 'names a difference that is not (or no longer) in the drift' },
    ]);
  }
  return found;
}

const keptOfTable = (table: string) => KEPT.find((kept) => kept.table.table === table)!;

/**
 * The writes that make the configuration say what PmaControl's rows say, for the chosen
 * differences, and only for them: a row only PmaControl has is created (its id kept), an entry whose
 * row is gone is deleted, a column chosen is patched with PmaControl's value — the other columns of
 * the row are not touched. A row that does not read as a write would, or an id the API would refuse,
 * is a problem, listed with those met deciding the writes (drift-keeper.ts): any problem, nothing is
 * adopted.
 */
export function adoptRequests(
  drift: Drift,
  chosen: DriftItem[],
): { requests: { request: WriteRequest; where: string }[]; problems: FieldError[] } {
  const requests: { request: WriteRequest; where: string }[] = [];
  const problems: FieldError[] = [];
  const byEntry = new Map<string, DriftItem[]>();
  for (const item of chosen)
    byEntry.set(`${item.table}/${item.id}`, [...(byEntry.get(`${item.table}/${item.id}`) ?? []), item]);
  for (const items of byEntry.values()) {
    const { table, id } = items[0]!;
    const kept = keptOfTable(table);
    const resource = kept.name as ResourceName;
    const read = drift.rows.get(key(resource, id));
    const where = (field: string) => `${table}/${id}${field ? `.${field}` : ''}`;
    const add = (request: Record<string, unknown>) =>
      requests.push({ request: request as WriteRequest, where: where('') });
    const whole = items.find((item) => item.column === null);
    if (whole?.pmacontrol === null) {
      add({ kind: 'delete', resource, id });
      continue;
    }
    if (whole && (!Number.isSafeInteger(id) || id < 1 || id > MAX_ID)) {
      problems.push({ field: where('id'), code: 'invalid_id', message: `must be an integer from 1 to ${MAX_ID}` });
      continue;
    }
    if (read?.problems) {
      problems.push(...read.problems.map((p) => ({ ...p, field: where(p.field) })));
      continue;
    }
    const input = read!.input!;
    if (whole) {
      add({ kind: 'create', resource, id, input });
      if (read!.deleted) add({ kind: 'delete', resource, id });
      continue;
    }
    const fields: Row = {};
    let deleteIt = false;
    for (const item of items) {
      if (item.column === 'is_deleted') {
        if (item.pmacontrol === true) deleteIt = true;
        else fields.is_deleted = false;
      } else fields[item.column!] = input[item.column!];
    }
    if (Object.keys(fields).length > 0) add({ kind: 'patch', resource, id, input: fields });
    if (deleteIt) add({ kind: 'delete', resource, id });
  }
  return { requests, problems };
}

/**
 * The entries whose rows an overwrite writes, each with the columns chosen (null: the whole row,
 * inserted, or deleted for a row the service does not have).
 */
export function overwriteEntries(chosen: DriftItem[]): { kept: Kept; id: number; columns: Set<string> | null }[] {
  const seen = new Map<string, { kept: Kept; id: number; columns: Set<string> | null }>();
  for (const { table, id, column } of chosen) {
    const entry = seen.get(`${table}/${id}`) ?? { kept: keptOfTable(table), id, columns: new Set<string>() };
    if (column === null) entry.columns = null;
    else entry.columns?.add(column);
    seen.set(`${table}/${id}`, entry);
  }
  return [...seen.values()];
}
