import type { ResourceName } from '../domain/resources.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { ConfigState } from '../domain/state.js';
import type { EntryRecord } from '../engine/table.js';
import { keyIn, unheldCharacter } from './charsets.js';
import { PMACONTROL_SCHEMA } from './columns.js';
import type { PmaControlCrypt } from './crypt.js';
import { Blocked, type TableTransaction } from './database.js';
import { columnProblems } from './limits.js';
import { differing, written } from './row-forms.js';
import { cipherColumns, datetime, KEPT, type Kept, type LinkRows, type Row, rowOf } from './rows.js';

/**
 * What the projection writes into PmaControl's tables for the entries a batch touched, decided inside
 * the batch's transaction from the rows as they are: a row that does not exist is inserted; a row
 * whose values are equal is left as it is (no `updated_at` moved, no history row in PmaControl's
 * system-versioned tables), else only its columns that differ are updated, in PmaControl's form where
 * it keeps its own (its 40-hex fingerprints, its `''` for an empty ssh_login, the ciphertext it
 * already holds for the same password, the creation time it recorded); link rows that exist stay,
 * and only the missing are added, the extra removed. It never writes over a row it did not write:
 * a row where an entry new to PmaControl would go, a row in a unique value's way, values PmaControl
 * cannot hold — the batch is then not applied (Blocked) and says why, until that is resolved.
 */

/** The fields of each entry to write (null: the whole row), by resource and id. */
export type Touched = Map<ResourceName, Map<number, ReadonlySet<string> | null>>;

export interface WriteScope {
  /**
   * What the batch changed (the fields its events changed; a creation, the whole row), or what an
   * overwrite chose: only those columns are written, so that a difference PmaControl made in another
   * column stays, as drift, until someone adopts or overwrites it.
   */
  touched: Touched;
  /** Whether this service has never written the entry's row: created since the position applied. */
  fresh(resource: ResourceName, id: number): boolean;
  /** The first write over these tables: every row they hold must be one of an entry. */
  first: boolean;
}

export interface WriteDeps {
  state: ConfigState;
  open: (sealed: Sealed) => string | undefined;
  crypt: PmaControlCrypt;
  /** Now, as PmaControl's DATETIME: when a link row is added. */
  now: string;
}

/** Reasons listed at most in a refusal; the drift lists every row. */
const MAX_LISTED = 100;

/** Columns PmaControl fills on insert for a link table, beside the two ids. */
const LINK_COLUMNS: Record<string, (now: string) => Row> = {
  link__mysql_server__ssh_key: (now) => ({ added_on: now, active: 1 }),
};

/** A short name of an entry's row for people: `tag 3 "MariaDB"`. */
function described(kept: Kept, row: Row): string {
  const label = PMACONTROL_SCHEMA[kept.table.table]!.unique[0]?.[0];
  return `${kept.table.table} ${String(row.id)}${label && row[label] !== undefined ? ` "${String(row[label])}"` : ''}`;
}

interface TablePlan {
  kept: Kept;
  deletes: number[];
  inserts: Row[];
  updates: { id: number; set: Row }[];
  /** The entries whose link rows are made to hold what they hold now. */
  links: { id: number; held: LinkRows[] }[];
  /** The unique keys' values of the rows written, by key. */
  keys: { columns: string[]; tuples: unknown[][]; ids: number[] }[];
  /** Each entry's row, as made once for the batch. */
  ours: Map<number, Row>;
}

/** Decides and makes the writes of one batch (or overwrite) in `tx`; Blocked when it must not. */
export async function writeTables(tx: TableTransaction, deps: WriteDeps, scope: WriteScope): Promise<void> {
  const refusals: string[] = [];
  const plans: TablePlan[] = [];
  for (const kept of KEPT) {
    if (!tx.has(kept.table.table)) continue;
    const plan = await planTable(tx, deps, scope, kept, refusals);
    if (plan) plans.push(plan);
  }
  for (const plan of plans) await checkHolders(tx, plan, refusals);
  if (refusals.length > 0) {
    const listed = refusals.slice(0, MAX_LISTED).join('; ');
    const more = refusals.length > MAX_LISTED ? `; and ${refusals.length - MAX_LISTED} more` : '';
    const resolve = scope.first ? ' (import them with import-pmacontrol, or adopt them: the drift lists them)' : '';
    throw new Blocked(`${listed}${more}${resolve}`);
  }
  for (const plan of plans) await execute(tx, deps, plan);
}

async function planTable(
  tx: TableTransaction,
  deps: WriteDeps,
  scope: WriteScope,
  kept: Kept,
  refusals: string[],
): Promise<TablePlan | undefined> {
  const fieldsOf = scope.touched.get(kept.name) ?? new Map<number, ReadonlySet<string> | null>();
  const ids = [...fieldsOf.keys()];
  if (ids.length === 0 && !scope.first) return undefined;
  const table = kept.table.table;
  const collection = deps.state.collections[kept.name];
  const rows = scope.first ? await tx.all(table) : await tx.rows(table, 'id', ids);
  const byId = new Map(rows.map((row) => [Number(row.id), row]));
  if (scope.first) {
    for (const row of rows)
      if (!collection.get(Number(row.id))) refusals.push(`${described(kept, row)} is not an entry`);
  }
  const plan: TablePlan = { kept, deletes: [], inserts: [], updates: [], links: [], keys: [], ours: new Map() };
  for (const [id, fields] of fieldsOf) planEntry(deps, scope, plan, { id, fields, theirs: byId.get(id) }, refusals);
  for (const columns of PMACONTROL_SCHEMA[table]!.unique) {
    const moved = plan.inserts.map((row) => row.id as number);
    for (const { id, set } of plan.updates) if (columns.some((c) => c in set)) moved.push(id);
    const wanted = moved.map((id) => plan.ours.get(id) ?? rowOf(kept, collection.get(id)!, deps.open).row);
    plan.keys.push({ columns, tuples: wanted.map((row) => columns.map((c) => row[c])), ids: moved });
  }
  return plan;
}

/** What one entry's row needs: nothing, an insert, an update of some columns, a delete; and its link rows. */
function planEntry(
  deps: WriteDeps,
  scope: WriteScope,
  plan: TablePlan,
  { id, fields, theirs }: { id: number; fields: ReadonlySet<string> | null; theirs: Row | undefined },
  refusals: string[],
): void {
  const { kept } = plan;
  const entry = deps.state.collections[kept.name].get(id);
  if (!entry) {
    // A row where an entry created and deleted since is not this service's: left as it is.
    if (theirs && !scope.fresh(kept.name, id)) plan.deletes.push(id);
    return;
  }
  const { row: ours, links } = rowOf(kept, entry, deps.open);
  plan.ours.set(id, ours);
  if (!theirs) {
    // Only a whole row is inserted: a row PmaControl deleted stays deleted (drift) when some fields change.
    if (fields !== null) return;
    problemsOf(kept, entry, Object.keys(entry), deps, refusals, true);
    plan.inserts.push(ours);
    plan.links.push({ id, held: links });
    return;
  }
  const changed = differing(kept, theirs, ours, entry, deps.crypt, fields ?? undefined);
  if (scope.fresh(kept.name, id) && changed.length > 0) {
    refusals.push(`${described(kept, theirs)} was not written by this service (${kept.name} ${id} differs)`);
    return;
  }
  // The crypted flag goes with the ciphertext it describes.
  const withFlag = (column: string) =>
    column === kept.table.cryptedColumn && cipherColumns(kept).some((cipher) => fields?.has(cipher));
  const chosen = fields === null ? changed : changed.filter((column) => fields.has(column) || withFlag(column));
  if (chosen.length > 0) {
    problemsOf(kept, entry, chosen, deps, refusals);
    plan.updates.push({ id, set: Object.fromEntries(chosen.map((column) => [column, ours[column]])) });
  }
  const held = links.filter(({ link }) => fields === null || fields.has(linkField(kept, link.table)));
  if (held.length > 0) plan.links.push({ id, held });
}

/** The field a link table keeps. */
const linkField = (kept: Kept, table: string) =>
  Object.entries(kept.table.links ?? {}).find(([, link]) => link.table === table)?.[0] ?? table;

/** Values PmaControl's columns cannot hold (written before the projection was configured): listed. */
function problemsOf(
  kept: Kept,
  entry: EntryRecord,
  fields: Iterable<string>,
  deps: WriteDeps,
  refusals: string[],
  withId = false,
): void {
  for (const problem of columnProblems(kept, entry, fields, deps.open, withId)) {
    refusals.push(`${kept.name} ${entry.id} ${problem.field}: ${problem.message}`);
  }
}

/** A unique value to be written that a row outside the batch already holds: refused, never written over. */
async function checkHolders(tx: TableTransaction, plan: TablePlan, refusals: string[]): Promise<void> {
  const table = plan.kept.table.table;
  const inBatch = new Set<number>([
    ...plan.deletes,
    ...plan.inserts.map((row) => row.id as number),
    ...plan.updates.map((update) => update.id),
  ]);
  for (const { columns, tuples, ids } of plan.keys) {
    const collations = columns.map((column) => PMACONTROL_SCHEMA[table]!.columns[column]?.collation ?? 'latin1_bin');
    if (tuples.length === 0 || !columns.every((column) => tx.has(table, column))) continue;
    // A value the column cannot hold is refused already (problemsOf); MariaDB could not even compare it.
    const comparable = tuples.filter((tuple) =>
      tuple.every((value, i) => {
        const charset = PMACONTROL_SCHEMA[table]!.columns[columns[i]!]?.charset;
        return typeof value !== 'string' || !charset || unheldCharacter(value, charset) === undefined;
      }),
    );
    if (comparable.length === 0) continue;
    for (const holder of await tx.holders(table, columns, comparable)) {
      if (inBatch.has(Number(holder.id))) continue;
      const key = (tuple: unknown[]) => tuple.map((value, i) => keyIn(collations[i]!, String(value ?? ''))).join('\0');
      const theirs = key(columns.map((column) => holder[column]));
      const id =
        ids[
          Math.max(
            0,
            tuples.findIndex((tuple) => key(tuple) === theirs),
          )
        ];
      refusals.push(
        `${plan.kept.name} ${id} cannot be written: ${described(plan.kept, holder)} holds the same ${columns.join(', ')} (unique in PmaControl)`,
      );
    }
  }
}

/** Link rows, row deletes, set-aside unique values, updates, inserts: in that order. */
async function execute(tx: TableTransaction, deps: WriteDeps, plan: TablePlan): Promise<void> {
  const { kept } = plan;
  const table = kept.table.table;
  for (const link of Object.values(kept.table.links ?? {})) {
    if (plan.deletes.length > 0 && tx.has(link.table)) await tx.remove(link.table, link.owner, plan.deletes);
  }
  if (plan.deletes.length > 0) await tx.remove(table, 'id', plan.deletes);
  await setAside(tx, plan);
  await tx.update(
    table,
    plan.updates.map(({ id, set }) => ({ id, set: written(kept, set, Object.keys(set), deps.crypt) })),
  );
  const inserted = plan.inserts.map((row) => written(kept, row, Object.keys(row), deps.crypt));
  await tx.insert(table, inserted);
  await writeLinks(tx, deps, plan);
}

/**
 * When two rows of the batch change unique values, those values are first set aside (`\u0001<id>`):
 * a value moving from one row to another (two names swapped) never meets itself on the way.
 */
async function setAside(tx: TableTransaction, plan: TablePlan): Promise<void> {
  const table = plan.kept.table.table;
  const keyed = PMACONTROL_SCHEMA[table]!.unique.map((columns) => columns[0]!);
  const moving = plan.updates.filter(({ set }) => keyed.some((column) => column in set));
  if (moving.length < 2) return;
  const aside = moving.map(({ id, set }) => ({
    id,
    set: Object.fromEntries(
      keyed.filter((column) => column in set && typeof set[column] === 'string').map((c) => [c, `\u0001${id}`]),
    ),
  }));
  await tx.update(table, aside);
}

/** Each entry's link rows: those it holds kept, the missing added, the others removed. */
async function writeLinks(tx: TableTransaction, deps: WriteDeps, plan: TablePlan): Promise<void> {
  const byTable = new Map<string, { link: LinkRows['link']; wanted: Map<number, number[]> }>();
  for (const { id, held } of plan.links) {
    for (const { link, ids } of held) {
      const entry = byTable.get(link.table) ?? { link, wanted: new Map() };
      entry.wanted.set(id, ids);
      byTable.set(link.table, entry);
    }
  }
  for (const [table, { link, wanted }] of byTable) {
    if (!tx.has(table)) continue;
    const existing = await tx.rows(table, link.owner, [...wanted.keys()]);
    const present = new Map<number, Set<number>>();
    const extra: number[] = [];
    for (const row of existing) {
      const owner = Number(row[link.owner]);
      const target = Number(row[link.target]);
      if (!wanted.get(owner)?.includes(target)) extra.push(Number(row.id));
      else present.set(owner, (present.get(owner) ?? new Set()).add(target));
    }
    if (extra.length > 0) await tx.remove(table, 'id', extra);
    const more = LINK_COLUMNS[table]?.(deps.now) ?? {};
    const added: Row[] = [];
    for (const [owner, ids] of wanted) {
      for (const target of ids) {
        if (!present.get(owner)?.has(target)) added.push({ [link.owner]: owner, [link.target]: target, ...more });
      }
    }
    await tx.insert(table, added);
  }
}

/** PmaControl's DATETIME of now. */
export const nowDatetime = () => datetime(new Date().toISOString());
