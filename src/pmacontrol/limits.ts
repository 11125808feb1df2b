import type { ResourceName } from '../domain/resources.js';
import type { FieldError } from '../domain/shared/errors.js';
import type { FieldSpec, Sealed } from '../domain/shared/fields.js';
import type { EntryRecord } from '../engine/table.js';
import { byteLength, keyIn, unheldCharacter } from './charsets.js';
import { type Column, INT_RANGE, PMACONTROL_SCHEMA, TEXT_BYTES } from './columns.js';
import { ciphertextBound, ciphertextLength } from './crypt.js';
import { columnOf, KEPT, type Kept } from './rows.js';

/**
 * What PmaControl's columns cannot hold (columns.ts): a character outside the column's charset, more
 * characters (or bytes) than it has room for, an integer outside INT, a secret whose ciphertext is
 * longer than its column. Checked on every write while the projection is configured (a 422 on the
 * field), and over a whole inventory by `pmacontrol-check`.
 */

type Values = Record<string, unknown>;

/** The code of a value PmaControl's column cannot hold. */
export const CANNOT_STORE = 'pmacontrol_cannot_store';

/** Why `value` does not fit `column` of `table`, or undefined. */
function columnProblem(table: string, name: string, column: Column, value: unknown): string | undefined {
  const where = `PmaControl stores ${table}.${name}`;
  if (typeof value === 'number') {
    if (column.type !== 'int' && column.type !== 'tinyint') return undefined;
    const [min, max] = INT_RANGE[column.type];
    return value < min || value > max ? `${where} as ${column.type.toUpperCase()}: ${min} to ${max}` : undefined;
  }
  if (typeof value !== 'string' || !column.charset) return undefined;
  const unheld = unheldCharacter(value, column.charset);
  if (unheld) {
    const point = `U+${unheld.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return `${where} in ${column.charset}, which has no "${unheld}" (${point})`;
  }
  if (column.length !== undefined && [...value].length > column.length) {
    return `${where} as ${column.type.toUpperCase()}(${column.length}): ${column.length} characters at most`;
  }
  if (column.type === 'text' && byteLength(value, column.charset) > TEXT_BYTES) {
    return `${where} as TEXT: ${TEXT_BYTES} bytes at most in ${column.charset}`;
  }
  return undefined;
}

/** A value kept encrypted: its ciphertext must fit, whatever the IV. */
function cipherProblem(table: string, name: string, column: Column, plain: string): string | undefined {
  const room = column.length ?? TEXT_BYTES;
  if (ciphertextBound(plain) <= room) return undefined;
  const length = ciphertextLength(plain);
  if (length <= room) return undefined;
  return (
    `PmaControl stores ${table}.${name} encrypted, in ${column.type.toUpperCase()}` +
    `${column.length ? `(${column.length})` : ''}: this value's ciphertext takes ${length} characters`
  );
}

/**
 * The problems of storing `fields` of an entry (`values` as stored: secrets sealed, opened with
 * `open`) in PmaControl's columns; `id` checked too when `withId`.
 */
export function columnProblems(
  kept: Kept,
  values: Values,
  fields: Iterable<string>,
  open: (sealed: Sealed) => string | undefined,
  withId = false,
): FieldError[] {
  const { table, links } = { table: kept.table.table, links: kept.table.links ?? {} };
  const columns = PMACONTROL_SCHEMA[table]!.columns;
  const problems: FieldError[] = [];
  const add = (field: string, message: string | undefined) => {
    if (message) problems.push({ field, code: CANNOT_STORE, message });
  };
  if (withId) add('id', columnProblem(table, 'id', columns.id!, values.id));
  for (const field of fields) {
    const spec = kept.resource.declaration.fields[field] as FieldSpec | undefined;
    if (!spec) continue;
    const value = values[field];
    const link = links[field];
    if (link) {
      const column = PMACONTROL_SCHEMA[link.table]!.columns[link.target]!;
      const outside = ((value as number[] | undefined) ?? []).find((id) => columnProblem(link.table, '', column, id));
      if (outside !== undefined) add(field, columnProblem(link.table, link.target, column, outside));
      continue;
    }
    const column = columns[field];
    if (!column) continue;
    if (spec.secret || spec.pmacontrol?.plainWhen) {
      const plain = spec.secret ? (typeof value === 'string' && value ? open(value as Sealed) : '') : value;
      if (typeof plain === 'string') add(field, cipherProblem(table, field, column, plain));
      continue;
    }
    add(field, columnProblem(table, field, column, columnOf(spec, value)));
  }
  return problems;
}

/**
 * Another entry whose values PmaControl's unique key (compared under its columns' collations) takes
 * for the same as `values`' — where PmaControl compares less strictly than this service does (its
 * latin1_swedish_ci weighs Ü as Y, Å as `[`); only keys made of `changed` fields are looked at.
 */
export function pmacontrolTwin(
  kept: Kept,
  values: Values,
  id: number,
  changed: Set<string>,
  entries: Iterable<EntryRecord>,
): { id: number; columns: string[] } | undefined {
  const { columns, unique } = PMACONTROL_SCHEMA[kept.table.table]!;
  for (const key of unique) {
    if (!key.some((column) => changed.has(column))) continue;
    if (!key.some((column) => columns[column]?.collation === 'latin1_swedish_ci')) continue;
    // Host names and addresses are ASCII: latin1_swedish_ci compares them as this service does.
    if (key.some((column) => kept.resource.declaration.fields[column]?.schema.format === 'host')) continue;
    const of = (entry: Values) =>
      key.map((column) => keyIn(columns[column]!.collation ?? 'latin1_bin', String(entry[column] ?? ''))).join('\0');
    const wanted = of(values);
    for (const entry of entries) if (entry.id !== id && of(entry) === wanted) return { id: entry.id, columns: key };
  }
  return undefined;
}

/** One thing PmaControl could not store, in an inventory. */
export interface InventoryProblem {
  resource: string;
  id: number;
  field: string;
  message: string;
}

/**
 * Everything an inventory holds that PmaControl's tables could not: values its columns cannot hold,
 * and names its collations take for another's (`pmacontrol-check`, before a projection starts).
 */
export function inventoryProblems(
  collections: (name: ResourceName) => Iterable<EntryRecord>,
  open: (sealed: Sealed) => string | undefined,
): InventoryProblem[] {
  const found: InventoryProblem[] = [];
  for (const kept of KEPT) {
    const entries = [...collections(kept.name)];
    const fields = Object.keys(kept.resource.declaration.fields);
    for (const entry of entries) {
      for (const problem of columnProblems(kept, entry, fields, open, true)) {
        found.push({ resource: kept.name, id: entry.id, field: problem.field, message: problem.message });
      }
    }
    const { columns, unique } = PMACONTROL_SCHEMA[kept.table.table]!;
    for (const key of unique) {
      const seen = new Map<string, number>();
      for (const entry of entries) {
        const of = key.map((column) => keyIn(columns[column]!.collation ?? 'latin1_bin', String(entry[column] ?? '')));
        const twin = seen.get(of.join('\0'));
        if (twin === undefined) seen.set(of.join('\0'), entry.id);
        else {
          const message = `the same ${key.join(', ')} as ${kept.name} ${twin} for PmaControl (its ${kept.table.table} table compares them as ${key.map((c) => columns[c]!.collation).join(', ')})`;
          found.push({ resource: kept.name, id: entry.id, field: key[0]!, message });
        }
      }
    }
  }
  return found;
}
