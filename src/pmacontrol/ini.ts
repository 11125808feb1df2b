import type { EntryRecord } from '../engine/table.js';
import type { PmaControlCrypt } from './crypt.js';

/**
 * PmaControl's connection file, `configuration/db.config.ini.php`, as its `generateMySQLConfig()`
 * writes it from `mysql_server`: its header, then one section per server in id order, each followed
 * by two empty lines. PmaControl's monitoring workers read it and reload it when its modification
 * time moves. Unlike PmaControl's generator, soft-deleted servers are left out: its workers would
 * go on polling a server that was removed.
 */

/** The header PmaControl's generator writes, line for line. */
export const INI_HEADER = [
  ";[name_of_connection] => will be acceded in framework with $this->di['db']->sql('name_of_connection')->method()",
  ';driver => list of SGBD avaible {mysql, pgsql, sybase, oracle}',
  ';hostname => server_name of ip of server SGBD (better to put localhost or real IP)',
  ';user => user who will be used to connect to the SGBD',
  ';password => password who will be used to connect to the SGBD',
  ';database => database / schema witch will be used to access to datas',
  '',
].join('\n');

/** The ciphertext of each section's password in a file as written, by section name. */
export function passwordsOf(text: string): Map<string, string> {
  const found = new Map<string, string>();
  let section: string | undefined;
  for (const line of text.split('\n')) {
    const header = /^\[(.*)\]$/.exec(line);
    if (header) section = header[1];
    else if (section !== undefined && line.startsWith('password=')) found.set(section, line.slice('password='.length));
  }
  return found;
}

/**
 * The file for these servers. `plain` opens a server's sealed password; a ciphertext of the file
 * as it is (`previous`) that opens to the same password is written again, so that the file changes
 * only when a server does (a new ciphertext has a new IV each time).
 */
export function pmacontrolIni(
  servers: Iterable<EntryRecord>,
  plain: (server: EntryRecord) => string,
  crypt: PmaControlCrypt,
  previous: Map<string, string> = new Map(),
): string {
  const live = [...servers].filter((server) => server.is_deleted !== true).sort((a, b) => a.id - b.id);
  let text = INI_HEADER;
  for (const server of live) {
    const name = String(server.name);
    const password = plain(server);
    const kept = previous.get(name);
    let ciphertext: string | undefined;
    try {
      if (kept !== undefined && crypt.decrypt(kept) === password) ciphertext = kept;
    } catch {
      // not a ciphertext of this key: made again
    }
    ciphertext ??= crypt.encrypt(password);
    text += `[${name}]\ndriver=mysql\nhostname=${server.ip}\nport=${server.port}\nuser=${server.login}\n`;
    text += `password=${ciphertext}\ncrypted=1\ndatabase=${server.database}\n\n\n`;
  }
  return text;
}
