import { RESOURCE_NAMES, type ResourceName, resourceOf } from '../domain/resources.js';
import type { PmaControlLink } from '../domain/shared/declaration.js';
import type { FieldSpec, Sealed } from '../domain/shared/fields.js';
import type { EntryRecord } from '../engine/table.js';

/**
 * The entries of this service as the rows of PmaControl's tables, as the declarations say (their
 * `pmacontrol` keys): what the projection into PmaControl's database writes, and what drift is
 * measured against. `import-pmacontrol` reads the same keys the other way (application/pmacontrol-tables.ts).
 */

/** A row as mysql2 gives and takes it. */
export type Row = Record<string, unknown>;

/** Every resource PmaControl keeps, with its table (the `pmacontrol` key of its declaration). */
export const KEPT = RESOURCE_NAMES.flatMap((name) => {
  const table = resourceOf(name).declaration.pmacontrol;
  return table ? [{ name, resource: resourceOf(name), table }] : [];
});
export type Kept = (typeof KEPT)[number];

/** A link table's rows for one entry: which ids it holds. */
export interface LinkRows {
  link: PmaControlLink;
  ids: number[];
}

/** PmaControl's DATETIME, in UTC: `2026-11-28 09:55:11`. */
export const datetime = (iso: string) => iso.slice(0, 19).replace('T', ' ');

/** A field's value as PmaControl's column holds it (flags as 0/1, none as 0 where it says so). */
export function columnOf(spec: FieldSpec, value: unknown): unknown {
  if (value === null || value === undefined) return spec.pmacontrol?.zeroIsNull ? 0 : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const type = spec.schema.type;
  if (type === 'boolean' || (Array.isArray(type) && type.includes('boolean'))) return value === true ? 1 : 0;
  return value;
}

/**
 * One entry as its row: every field in the column of its name — the values PmaControl keeps
 * encrypted (secrets, `plainWhen`) in plain text here, encrypted when written (cipherColumns) —,
 * the crypted flag set, `is_deleted` for a resource deleted softly, the creation time where the table
 * keeps it. Lists of ids are the link rows, apart. `open` gives a sealed secret's plain text.
 */
export function rowOf(
  kept: Kept,
  entry: EntryRecord,
  open: (sealed: Sealed) => string | undefined,
): { row: Row; links: LinkRows[] } {
  const { resource, table } = kept;
  const row: Row = { id: entry.id };
  const links: LinkRows[] = [];
  for (const [field, spec] of Object.entries(resource.declaration.fields) as [string, FieldSpec][]) {
    const link = table.links?.[field];
    const value = entry[field];
    if (link) links.push({ link, ids: (value as number[] | undefined) ?? [] });
    else if (spec.secret) row[field] = typeof value === 'string' && value !== '' ? (open(value as Sealed) ?? '') : '';
    else row[field] = columnOf(spec, value);
  }
  if (table.cryptedColumn) row[table.cryptedColumn] = 1;
  if (resource.declaration.deletion === 'soft') row.is_deleted = entry.is_deleted === true ? 1 : 0;
  if (table.createdAt) row[table.createdAt] = datetime(entry.created_at);
  return { row, links };
}

/** The columns of a row that hold a ciphertext: compared by what they open to, never shown. */
export function cipherColumns(kept: Kept): string[] {
  return (Object.entries(kept.resource.declaration.fields) as [string, FieldSpec][])
    .filter(([, spec]) => spec.secret || spec.pmacontrol?.plainWhen)
    .map(([field]) => field);
}

/** The kept resource of a name. */
export const keptOf = (name: ResourceName): Kept | undefined => KEPT.find((kept) => kept.name === name);
