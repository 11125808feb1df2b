import type { ResourceName } from '../domain/resources.js';

/** A row as mysql2 gives it. */
export type Row = Record<string, unknown>;

/** The rows of PmaControl's tables this service takes, by table name. */
export type PmaControlTables = Record<(typeof TABLES)[number], Row[]>;

/** PmaControl's tables (its install schema, sql/full/pmacontrol.sql), in the order they are read. */
export const TABLES = [
  'client',
  'environment',
  'tag',
  'mysql_server',
  'link__mysql_server__tag',
  'ssh_key',
  'backup_storage_area',
  'alias_dns',
] as const;

/** Which table each resource comes from. */
export const TABLE_OF: Record<ResourceName, string> = {
  clients: 'client',
  environments: 'environment',
  tags: 'tag',
  servers: 'mysql_server',
  'ssh-keys': 'ssh_key',
  'storage-areas': 'backup_storage_area',
  aliases: 'alias_dns',
};

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
/** PmaControl's geolocalisation ids are NOT NULL: 0 means none. */
const optionalId = (value: unknown) =>
  value === null || value === undefined || Number(value) === 0 ? null : Number(value);

/** The columns that exist in this row (older PmaControl schemas lack some): absent ones are left to defaults. */
function pick(row: Row, columns: Record<string, (value: unknown) => unknown>): Row {
  const entry: Row = {};
  for (const [column, convert] of Object.entries(columns)) {
    if (!Object.hasOwn(row, column)) continue;
    const value = convert(row[column]);
    if (value !== undefined) entry[column] = value;
  }
  return entry;
}

const clientEntry = (row: Row) => pick(row, { id: number, libelle: text, logo: text, is_monitored: flag });
const environmentEntry = (row: Row) => pick(row, { id: number, libelle: text, key: text, class: text, letter: text });
const tagEntry = (row: Row) => pick(row, { id: number, name: text, color: text, background: text });
const aliasEntry = (row: Row) => pick(row, { id: number, id_mysql_server: number, dns: text, port: number });

function storageAreaEntry(row: Row): Row {
  return {
    ...pick(row, { id: number, id_ssh_key: number, ip: text, port: number, path: text, libelle: text }),
    ...pick(row, { id_geolocalisation_city: optionalId, id_geolocalisation_country: optionalId }),
  };
}

const SERVER_COLUMNS = {
  ...{ id: number, id_client: number, id_environment: number, name: text, ip: text, hostname: text, port: number },
  ...{ login: text, database: text, is_ssl: flag, ssh_nat: text, ssh_port: number, ssh_login: text },
  ...{ is_sudo: flag, is_root: flag, is_monitored: flag, is_proxy: flag, is_vip: flag, is_acknowledged: number },
};

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
 * A server: its columns, its tags from the link table, its password opened when PmaControl stored it
 * encrypted (`is_password_crypted`), and `is_deleted` for the soft-deleted ones. An empty
 * display_name falls back to the name, as PmaControl shows it.
 */
function serverEntry(row: Row, tags: number[], decrypt: Decrypt, problems: RowProblem[]): Row {
  const entry: Row = { ...pick(row, SERVER_COLUMNS), tags };
  const display = text(row.display_name);
  if (display) entry.display_name = display;
  if (Object.hasOwn(row, 'is_deleted')) entry.is_deleted = Number(row.is_deleted) !== 0;
  const passwd = text(row.passwd) ?? '';
  const crypted = Number(row.is_password_crypted ?? 0) !== 0;
  entry.passwd = crypted ? opened('mysql_server', row, 'passwd', passwd, decrypt, problems) : passwd;
  return entry;
}

/**
 * An SSH key: PmaControl stores the private key encrypted with its CRYPT_KEY; a key stored in clear
 * (an OpenSSH or PEM block) is taken as it is. type, bit and fingerprint are derived here again.
 */
function sshKeyEntry(row: Row, decrypt: Decrypt, problems: RowProblem[]): Row {
  const entry = pick(row, { id: number, name: text, user: text, public_key: text, comment: text });
  const stored = text(row.private_key) ?? '';
  const clear = /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(stored);
  entry.private_key = clear ? stored : opened('ssh_key', row, 'private_key', stored, decrypt, problems);
  return entry;
}

/** The tags of each server, from link__mysql_server__tag. */
function tagsByServer(links: Row[]): Map<number, number[]> {
  const byServer = new Map<number, number[]>();
  for (const link of links) {
    const server = Number(link.id_mysql_server);
    byServer.set(server, [...(byServer.get(server) ?? []), Number(link.id_tag)]);
  }
  return byServer;
}

/**
 * PmaControl's rows as an import document (the format of an export), and the problems met opening
 * their secrets. The import then checks every entry under the service's own rules.
 */
export function documentFromTables(tables: PmaControlTables, decrypt: Decrypt) {
  const problems: RowProblem[] = [];
  const tags = tagsByServer(tables.link__mysql_server__tag);
  const resources: Record<ResourceName, Row[]> = {
    clients: tables.client.map(clientEntry),
    environments: tables.environment.map(environmentEntry),
    tags: tables.tag.map(tagEntry),
    servers: tables.mysql_server.map((row) => serverEntry(row, tags.get(Number(row.id)) ?? [], decrypt, problems)),
    'ssh-keys': tables.ssh_key.map((row) => sshKeyEntry(row, decrypt, problems)),
    'storage-areas': tables.backup_storage_area.map(storageAreaEntry),
    aliases: tables.alias_dns.map(aliasEntry),
  };
  return { document: { format: 'pmacontrol-config/1', resources }, problems };
}
