import { RESOURCE_NAMES, type ResourceName, resourceOf } from '../domain/resources.js';
import type { FieldSpec } from '../domain/shared/fields.js';

/** A row as mysql2 gives it. */
export type Row = Record<string, unknown>;

/** The rows of PmaControl's tables this service takes, by table name. */
export type PmaControlTables = Record<string, Row[]>;

/** Every resource PmaControl keeps, with its table (the `pmacontrol` key of its declaration). */
const KEPT = RESOURCE_NAMES.flatMap((name) => {
  const table = resourceOf(name).declaration.pmacontrol;
  return table ? [{ name, resource: resourceOf(name), table }] : [];
});

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

/** A column's value as the field takes it, from the field's type and how PmaControl keeps it; undefined: left out. */
function columnValue(spec: FieldSpec, value: unknown): unknown {
  const { zeroIsNull, emptyIsAbsent } = spec.pmacontrol ?? {};
  const types = [spec.schema.type].flat();
  if (zeroIsNull && (value === null || value === undefined || Number(value) === 0)) return null;
  if (types.includes('boolean')) return flag(value);
  if (types.includes('integer')) return number(value);
  const shown = text(value);
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

/** The ids of a link table, by the row that holds them. */
function linked(links: Row[], owner: string, target: string): Map<number, number[]> {
  const byOwner = new Map<number, number[]>();
  for (const link of links) {
    const id = Number(link[owner]);
    byOwner.set(id, [...(byOwner.get(id) ?? []), Number(link[target])]);
  }
  return byOwner;
}

/**
 * One row as an entry of its resource, as the declaration says: each field from the column of its
 * name (a column an older PmaControl lacks is left to the field's default; a derived field is
 * derived again), lists of ids from their link tables, secrets opened when PmaControl stored them
 * encrypted, and `is_deleted` for a resource deleted softly.
 */
function entryOf(
  kept: (typeof KEPT)[number],
  row: Row,
  tables: PmaControlTables,
  decrypt: Decrypt,
  problems: RowProblem[],
) {
  const { resource, table } = kept;
  const entry: Row = {};
  if (Object.hasOwn(row, 'id')) entry.id = number(row.id);
  for (const [field, spec] of Object.entries(resource.declaration.fields) as [string, FieldSpec][]) {
    const link = table.links?.[field];
    if (link) {
      entry[field] = linked(tables[link.table] ?? [], link.owner, link.target).get(Number(row.id)) ?? [];
    } else if (spec.secret) {
      const stored = text(row[field]) ?? '';
      const crypted = table.cryptedFlag
        ? Number(row[table.cryptedFlag] ?? 0) !== 0
        : !(spec.pmacontrol?.plainWhen?.test(stored) ?? false);
      entry[field] = crypted ? opened(table.table, row, field, stored, decrypt, problems) : stored;
    } else if (!spec.derived && Object.hasOwn(row, field)) {
      const value = columnValue(spec, row[field]);
      if (value !== undefined) entry[field] = value;
    }
  }
  if (resource.declaration.deletion === 'soft' && Object.hasOwn(row, 'is_deleted'))
    entry.is_deleted = Number(row.is_deleted) !== 0;
  return entry;
}

/**
 * PmaControl's rows as an import document (the format of an export), and the problems met opening
 * their secrets. The import then checks every entry under the service's own rules.
 */
export function documentFromTables(tables: PmaControlTables, decrypt: Decrypt) {
  const problems: RowProblem[] = [];
  const resources = Object.fromEntries(
    KEPT.map((kept) => [
      kept.name,
      (tables[kept.table.table] ?? []).map((row) => entryOf(kept, row, tables, decrypt, problems)),
    ]),
  ) as Record<ResourceName, Row[]>;
  return { document: { format: 'pmacontrol-config/1', resources }, problems };
}
