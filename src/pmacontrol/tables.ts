import type { ResourceName } from '../domain/resources.js';
import type { PmaControlLink } from '../domain/shared/declaration.js';
import type { FieldSpec } from '../domain/shared/fields.js';
import { KEPT, type Kept, type Row } from './rows.js';

export type { Row };

/** The rows of PmaControl's tables this service takes, by table name. */
export type PmaControlTables = Record<string, Row[]>;

/** PmaControl's tables this service reads: each resource's, then its link tables. */
export const TABLES: readonly string[] = KEPT.flatMap(({ table }) => [
  table.table,
  ...Object.values(table.links ?? {}).map((link) => link.table),
]);

/** Which table each resource comes from. */
export const TABLE_OF = Object.fromEntries(KEPT.map(({ name, table }) => [name, table.table])) as Record<
  ResourceName,
  string
>;

/** Opens a secret PmaControl stored encrypted; throws when it does not open (or no key was given). */
export type Decrypt = (ciphertext: string) => string;

/**
 * Stands for a secret that did not open, so that the row's other problems are still found; the
 * import is then refused (decided as a dry run), so this never reaches the log.
 */
export const UNOPENED = 'unopened secret';

/** A problem with a row, before the import's own checks: the field and why. */
export interface RowProblem {
  table: string;
  id: unknown;
  field: string;
  message: string;
}

const text = (value: unknown) => (value === null || value === undefined ? undefined : String(value));
const number = (value: unknown) => (value === null || value === undefined ? undefined : Number(value));
/** PmaControl keeps flags as integers (or '0'/'1' enums): 0 and 1 are what the service takes too. */
const flag = (value: unknown) => (value === null || value === undefined ? undefined : Number(value) === 0 ? 0 : 1);

/**
 * PmaControl's schema gives some text columns the default `''''`: the two characters `''`, which
 * stand for an empty value.
 */
const QUOTED_EMPTY = "''";

/** A column's value as the field takes it, from the field's type and how PmaControl keeps it; undefined: left out. */
function columnValue(spec: FieldSpec, value: unknown): unknown {
  const { zeroIsNull, emptyIsAbsent } = spec.pmacontrol ?? {};
  const types = [spec.schema.type].flat();
  if (zeroIsNull && (value === null || value === undefined || Number(value) === 0)) return null;
  if (types.includes('boolean')) return flag(value);
  if (types.includes('integer')) return number(value);
  let shown = text(value);
  if (shown === QUOTED_EMPTY && !spec.required) shown = '';
  return emptyIsAbsent && shown === '' ? undefined : shown;
}

/** A secret PmaControl stored encrypted, opened; if it does not open, a problem and UNOPENED in its place. */
function opened(table: string, row: Row, field: string, stored: string, decrypt: Decrypt, problems: RowProblem[]) {
  try {
    return decrypt(stored);
  } catch (error) {
    problems.push({ table, id: row.id, field, message: (error as Error).message });
    return UNOPENED;
  }
}

/**
 * The ids of a link table, by the row that holds them. A link whose row or target is not in its
 * table is a problem of the link table's, and left out.
 */
function linked(
  link: PmaControlLink,
  ownerTable: string,
  targetTable: string,
  tables: PmaControlTables,
  problems: RowProblem[],
): Map<number, number[]> {
  const ids = (table: string) => new Set((tables[table] ?? []).map((row) => Number(row.id)));
  const owners = ids(ownerTable);
  const targets = ids(targetTable);
  const byOwner = new Map<number, number[]>();
  for (const row of tables[link.table] ?? []) {
    const id = Number(row[link.owner]);
    const target = Number(row[link.target]);
    const missing = !owners.has(id)
      ? `${ownerTable} ${String(row[link.owner])}`
      : !targets.has(target)
        ? `${targetTable} ${String(row[link.target])}`
        : undefined;
    if (missing) {
      const where = `${link.owner}=${String(row[link.owner])} ${link.target}=${String(row[link.target])}`;
      problems.push({ table: link.table, id: where, field: '', message: `links to ${missing}, which does not exist` });
      continue;
    }
    byOwner.set(id, [...(byOwner.get(id) ?? []), target]);
  }
  return byOwner;
}

/** The table PmaControl keeps a resource in. */
const tableOfResource = (name: string) => KEPT.find((kept) => kept.name === name)?.table.table ?? name;

/** A kept resource's link tables read: field → row id → ids. */
type Links = Map<string, Map<number, number[]>>;

/** The link tables of a resource, each read once. */
function linksOf(kept: Kept, tables: PmaControlTables, problems: RowProblem[]): Links {
  const links: Links = new Map();
  for (const [field, link] of Object.entries(kept.table.links ?? {})) {
    const target = kept.resource.declaration.fields[field]?.reference?.target ?? field;
    links.set(field, linked(link, kept.table.table, tableOfResource(target), tables, problems));
  }
  return links;
}

/**
 * One row as an entry of its resource, as the declaration says: each field from the column of its
 * name (a column an older PmaControl lacks is left to the field's default; a derived field is
 * derived again), lists of ids from their link tables, values PmaControl stored encrypted opened, and
 * `is_deleted` for a resource deleted softly.
 */
function entryOf(kept: Kept, row: Row, links: Links, decrypt: Decrypt, problems: RowProblem[]) {
  const { resource, table } = kept;
  const entry: Row = {};
  if (Object.hasOwn(row, 'id')) entry.id = number(row.id);
  for (const [field, spec] of Object.entries(resource.declaration.fields) as [string, FieldSpec][]) {
    const link = links.get(field);
    const plainWhen = spec.pmacontrol?.plainWhen;
    if (link) {
      entry[field] = link.get(Number(row.id)) ?? [];
    } else if (spec.secret || (plainWhen && typeof row[field] === 'string')) {
      const stored = text(row[field]) ?? '';
      const crypted =
        spec.secret && table.cryptedColumn
          ? Number(row[table.cryptedColumn] ?? 0) !== 0
          : !(plainWhen?.test(stored) ?? false);
      entry[field] = crypted ? opened(table.table, row, field, stored, decrypt, problems) : stored;
    } else if (!spec.derived && Object.hasOwn(row, field)) {
      const value = columnValue(spec, row[field]);
      if (value === QUOTED_EMPTY) {
        problems.push({
          table: table.table,
          id: row.id,
          field,
          message: `is PmaControl's empty value ${QUOTED_EMPTY}, and a value is required`,
        });
      }
      if (value !== undefined) entry[field] = value;
    }
  }
  if (resource.declaration.deletion === 'soft' && Object.hasOwn(row, 'is_deleted'))
    entry.is_deleted = Number(row.is_deleted) !== 0;
  return entry;
}

/** Reads every row as an entry, one row per step: `documentFromTables` runs it at once, drift a slice at a time. */
function* readRows(
  tables: PmaControlTables,
  decrypt: Decrypt,
  problems: RowProblem[],
  resources: Partial<Record<ResourceName, Row[]>>,
): Generator<void> {
  for (const kept of KEPT) {
    const links = linksOf(kept, tables, problems);
    const entries: Row[] = [];
    resources[kept.name] = entries;
    for (const row of tables[kept.table.table] ?? []) {
      entries.push(entryOf(kept, row, links, decrypt, problems));
      yield;
    }
  }
}

/**
 * PmaControl's rows as an import document (the format of an export), and the problems met opening
 * their secrets. The import then checks every entry under the service's own rules.
 */
export function documentFromTables(tables: PmaControlTables, decrypt: Decrypt) {
  const problems: RowProblem[] = [];
  const resources: Partial<Record<ResourceName, Row[]>> = {};
  for (const _ of readRows(tables, decrypt, problems, resources));
  return { document: { format: 'pmacontrol-config/1', resources: resources as Record<ResourceName, Row[]> }, problems };
}

/** The same, `pause` awaited after each row: a large PmaControl read without holding the event loop. */
export async function documentFromTablesPaced(tables: PmaControlTables, decrypt: Decrypt, pause: () => Promise<void>) {
  const problems: RowProblem[] = [];
  const resources: Partial<Record<ResourceName, Row[]>> = {};
  for (const _ of readRows(tables, decrypt, problems, resources)) await pause();
  return { document: { format: 'pmacontrol-config/1', resources: resources as Record<ResourceName, Row[]> }, problems };
}
