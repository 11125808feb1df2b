import type { ConfigService } from '../application/service.js';
import type { ResourceName } from '../domain/resources.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { PmaControlCrypt } from './crypt.js';
import type { EntryWrite, PmaControlDatabase } from './database.js';
import { cipherColumns, KEPT, keptOf, type RowCrypt, rowOf } from './rows.js';

/**
 * The rows of the touched entries as the state holds them now (an entry gone: its row deleted). A
 * ciphertext already stored that opens to the same value is kept, so that a row whose secret did
 * not change is written the same.
 */
export async function entryWrites(
  deps: { service: ConfigService; database: PmaControlDatabase; crypt: PmaControlCrypt },
  touched: Map<ResourceName, Set<number>>,
): Promise<EntryWrite[]> {
  const stored = new Map<string, string>();
  for (const [name, ids] of touched) {
    const kept = keptOf(name)!;
    const columns = cipherColumns(kept);
    if (columns.length === 0) continue;
    for (const row of await deps.database.rows(kept.table.table, [...ids])) {
      for (const column of columns) stored.set(`${name}/${row.id}/${column}`, String(row[column] ?? ''));
    }
  }
  const { service, crypt } = deps;
  const writes: EntryWrite[] = [];
  for (const kept of KEPT) {
    for (const id of touched.get(kept.name) ?? []) {
      const entry = service.state.collections[kept.name].get(id);
      if (!entry) {
        writes.push({ kept, id, links: [] });
        continue;
      }
      const rowCrypt: RowCrypt = {
        open: (sealed) => service.write.openSealed(sealed as Sealed),
        encrypt: (plain, column) => stableEncrypt(crypt, plain, stored.get(`${kept.name}/${id}/${column}`)),
      };
      const { row, links } = rowOf(kept, entry, rowCrypt);
      writes.push({ kept, id, row, links });
    }
  }
  return writes;
}

/** `plain` as PmaControl's ciphertext: the one stored, if it opens to the same value, else a new one. */
function stableEncrypt(crypt: PmaControlCrypt, plain: string, stored: string | undefined): string {
  if (stored) {
    try {
      if (crypt.decrypt(stored) === plain) return stored;
    } catch {
      // not a ciphertext of this key: made again
    }
  }
  return crypt.encrypt(plain);
}
