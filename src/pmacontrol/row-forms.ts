import { analysePublicKey } from '../domain/ssh-keys/keys.js';
import type { EntryRecord } from '../engine/table.js';
import type { PmaControlCrypt } from './crypt.js';
import { cipherColumns, type Kept, type Row } from './rows.js';

/**
 * A row as PmaControl holds it against the row an entry makes: which columns differ, PmaControl's own
 * forms of the same value kept (its 40-hex fingerprints, its `''` for an empty ssh_login, a ciphertext
 * or a plain password that opens to the same), and the columns as they are written (encrypted).
 */

/** Where PmaControl keeps a value in a form of its own that means the same as the service's. */
export const KEPT_FORMS: Record<string, Record<string, (theirs: unknown, entry: EntryRecord) => boolean>> = {
  ssh_key: {
    fingerprint: (theirs, entry) =>
      String(theirs).toUpperCase() === analysePublicKey(String(entry.public_key)).legacyFingerprint,
  },
  mysql_server: {
    ssh_login: (theirs, entry) => theirs === "''" && entry.ssh_login === '',
    // An empty display_name, which PmaControl shows as the name, is read as the name.
    display_name: (theirs, entry) => theirs === '' && entry.display_name === entry.name,
  },
};

/**
 * The columns of `theirs` that differ from the entry's `ours` (plain values), PmaControl's own forms
 * kept; only those of `only` when given (a ciphertext is opened to be compared only when it is asked
 * for: bench/pmacontrol.ts, a backlog of PATCHes caught up).
 */
export function differing(
  kept: Kept,
  theirs: Row,
  ours: Row,
  entry: EntryRecord,
  crypt: PmaControlCrypt,
  only?: ReadonlySet<string>,
): string[] {
  const { cryptedColumn, createdAt, table } = kept.table;
  const ciphers = new Set(cipherColumns(kept));
  const plainStored = cryptedColumn !== undefined && Number(theirs[cryptedColumn]) === 0;
  const changed: string[] = [];
  for (const [column, value] of Object.entries(ours)) {
    if (column === 'id' || column === createdAt || column === cryptedColumn || !(column in theirs)) continue;
    if (only && !only.has(column)) continue;
    const stored = theirs[column];
    let same: boolean;
    if (ciphers.has(column)) same = opened(crypt, stored, plainStored && column !== 'public_key') === value;
    else if (typeof value === 'number') same = stored !== null && Number(stored) === value;
    else same = value === null ? stored === null : String(stored ?? '') === value && stored !== null;
    if (!same && KEPT_FORMS[table]?.[column]?.(stored, entry)) same = true;
    if (!same) changed.push(column);
  }
  if (cryptedColumn && changed.some((column) => ciphers.has(column))) changed.push(cryptedColumn);
  return changed;
}

/** A stored value PmaControl may keep encrypted, opened; undefined when it does not open. */
function opened(crypt: PmaControlCrypt, stored: unknown, plain: boolean): string | undefined {
  if (typeof stored !== 'string') return undefined;
  if (plain || /^(ssh|ecdsa|sk)-|-----BEGIN/.test(stored)) return stored;
  try {
    return crypt.decrypt(stored);
  } catch {
    return undefined;
  }
}

/** The columns of a row as they are written: the values kept encrypted made PmaControl's ciphertexts. */
export function written(kept: Kept, row: Row, columns: Iterable<string>, crypt: PmaControlCrypt): Row {
  const ciphers = new Set(cipherColumns(kept));
  const out: Row = {};
  for (const column of columns) {
    const value = row[column];
    out[column] = ciphers.has(column) && typeof value === 'string' && value !== '' ? crypt.encrypt(value) : value;
  }
  return out;
}
