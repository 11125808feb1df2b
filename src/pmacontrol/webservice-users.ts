import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../application/service.js';
import { RequestError } from '../http/route-module.js';
import { keyIn } from './charsets.js';
import type { PmaControlCrypt } from './crypt.js';
import type { PmaControlDatabase } from './database.js';

/**
 * The Basic credentials PmaControl's own push jobs send: a user of its `webservice_user` table,
 * enabled, whose password (kept as PmaControl's ciphertext) opens to the one sent — compared as
 * PmaControl compares them (the user name under its latin1_swedish_ci, the password exactly). The
 * caller is then a writer named `pmacontrol:<user>`. Nothing of them is stored.
 */
export async function webserviceUser(
  database: PmaControlDatabase,
  crypt: PmaControlCrypt,
  user: string,
  password: string,
): Promise<Principal | undefined> {
  let rows: Record<string, unknown>[];
  try {
    rows = await database.rows('webservice_user');
  } catch {
    throw new RequestError(
      503,
      'unavailable',
      "PmaControl's database does not answer: the credentials of its webservice users cannot be checked",
    );
  }
  const wanted = keyIn('latin1_swedish_ci', user);
  for (const row of rows) {
    if (Number(row.is_enabled) !== 1 || keyIn('latin1_swedish_ci', String(row.user)) !== wanted) continue;
    let stored: string;
    try {
      stored = crypt.decrypt(String(row.password));
    } catch {
      continue; // not a ciphertext of this key: not a password this service can check
    }
    if (sameSecret(stored, password))
      return { actor: `pmacontrol:${String(row.user)}`, role: 'writer', secrets: false };
  }
  return undefined;
}

/** Two secrets compared in a time that does not depend on where they differ. */
function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
