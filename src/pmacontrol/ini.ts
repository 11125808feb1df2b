import type { EntryRecord } from '../engine/table.js';
import type { PmaControlCrypt } from './crypt.js';

/**
 * PmaControl's connection file, `configuration/db.config.ini.php`, as its `generateMySQLConfig()`
 * writes it from `mysql_server` — a section per server with its connection — read by PHP's
 * `parse_ini_file($file, true)` in its workers, which reload it when its modification time moves.
 * Here every section name and value is double-quoted and escaped as PHP's INI scanner reads it back
 * (`"`, `\` and `$` escaped: a name with a quote, a semicolon, a newline or `${…}` reads back as
 * written and injects nothing); the sections this service writes sit between two comment lines,
 * and every other section (the installer's `[pmacontrol]`) is kept as it is. Unlike PmaControl's
 * generator, soft-deleted servers are left out: its workers would go on polling a removed server.
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

/** The lines around the sections this service writes; what is outside them is not its. */
export const BEGIN = '; --- written by pmacontrol-config from its servers: the sections below, up to the END line ---';
export const END = '; --- END of the sections written by pmacontrol-config ---';

/** A file that cannot be written as asked: a server's section would be another one's. */
export class IniConflict extends Error {
  override name = 'IniConflict';
}

/** A value as PHP's INI scanner (INI_SCANNER_NORMAL) reads it back exactly. */
export function quoted(value: string): string {
  if (value.includes('\0'))
    throw new IniConflict(`a value holds a NUL character, which PHP's INI files cannot: ${JSON.stringify(value)}`);
  return `"${value.replace(/[\\"$]/g, (c) => `\\${c}`)}"`;
}

/** What `quoted` made, read back; a bare value as it is. */
function unquoted(value: string): string {
  const text = value.trim();
  if (!(text.startsWith('"') && text.endsWith('"') && text.length >= 2)) return text;
  return text.slice(1, -1).replace(/\\([\\"$])/g, '$1');
}

/** A section header's name: `[name]` or `["name"]`; undefined for any other line. */
function sectionName(line: string): string | undefined {
  const header = /^\s*\[(.*)\]\s*$/.exec(line);
  return header ? unquoted(header[1]!) : undefined;
}

interface Section {
  name: string;
  lines: string[];
}

/** A file's lines outside this service's block, cut into what comes before the first section and the sections. */
function sectionsOf(lines: string[]): { preamble: string[]; sections: Section[] } {
  const preamble: string[] = [];
  const sections: Section[] = [];
  for (const line of lines) {
    const name = sectionName(line);
    if (name !== undefined) sections.push({ name, lines: [line] });
    else if (sections.length > 0) sections.at(-1)!.lines.push(line);
    else preamble.push(line);
  }
  return { preamble, sections };
}

/** A file as it is: the sections kept (not this service's), and the ciphertext of each section it wrote. */
export function readIni(
  text: string,
  servers: ReadonlySet<string>,
): { kept: Section[]; passwords: Map<string, string> } {
  const lines = text.split('\n');
  const begin = lines.indexOf(BEGIN);
  const end = lines.indexOf(END);
  const marked = begin >= 0 && end > begin;
  const outside = marked ? [...lines.slice(0, begin), ...lines.slice(end + 1)] : lines;
  const ours = marked ? sectionsOf(lines.slice(begin + 1, end)).sections : [];
  const { sections } = sectionsOf(outside);
  // A file PmaControl's generator wrote has no block: a section named as a server (soft-deleted ones
  // included, which that generator writes too) is one this service now writes.
  const kept = sections.filter((section) => marked || !servers.has(section.name));
  const passwords = new Map<string, string>();
  for (const section of marked ? ours : sections.filter((s) => servers.has(s.name))) {
    const line = section.lines.find((l) => /^\s*password\s*=/.test(l));
    if (line) passwords.set(section.name, unquoted(line.slice(line.indexOf('=') + 1)));
  }
  return { kept, passwords };
}

/**
 * The file for these servers, `previous` (the file as it is) kept but for the sections this service
 * writes. `plain` opens a server's sealed password; a ciphertext of the previous file that opens to
 * the same password is written again, so that the file changes only when a server does (a new
 * ciphertext has a new IV each time).
 */
export function pmacontrolIni(
  servers: Iterable<EntryRecord>,
  plain: (server: EntryRecord) => string,
  crypt: PmaControlCrypt,
  previous = '',
): string {
  const all = [...servers];
  const { kept, passwords } = readIni(previous, new Set(all.map((server) => String(server.name))));
  const live = all.filter((server) => server.is_deleted !== true).sort((a, b) => a.id - b.id);
  const taken = new Set(kept.map((section) => section.name));
  let text = INI_HEADER;
  for (const section of kept) text += `${section.lines.join('\n').replace(/\n*$/, '')}\n\n`;
  text += `${BEGIN}\n`;
  for (const server of live) {
    const name = String(server.name);
    if (taken.has(name)) {
      throw new IniConflict(
        `server ${server.id} is named "${name}", as a section of the file this service does not write`,
      );
    }
    const password = plain(server);
    const previousCipher = passwords.get(name);
    let ciphertext: string | undefined;
    try {
      if (previousCipher !== undefined && crypt.decrypt(previousCipher) === password) ciphertext = previousCipher;
    } catch {
      // not a ciphertext of this key: made again
    }
    ciphertext ??= crypt.encrypt(password);
    const values: [string, string][] = [
      ['driver', 'mysql'],
      ['hostname', String(server.ip)],
      ['port', String(server.port)],
      ['user', String(server.login)],
      ['password', ciphertext],
      ['crypted', '1'],
      ['database', String(server.database)],
    ];
    text += `[${quoted(name)}]\n${values.map(([key, value]) => `${key}=${quoted(value)}`).join('\n')}\n\n\n`;
  }
  return `${text}${END}\n`;
}
