/**
 * PmaControl's own columns, as its install schema declares them (sql/full/pmacontrol.sql, MariaDB
 * 10.11): for the tables this service writes, every column it writes or compares, with its type,
 * length, charset and collation, and each table's unique keys. What PmaControl could not store is
 * refused before it reaches the log (limits.ts), and the projection never meets it.
 * test/pmacontrol/schema.test.ts checks this catalogue against the fixture's tables, loaded into
 * MariaDB and read back from information_schema.
 */

export type Charset = 'latin1' | 'utf8mb3' | 'utf8mb4';
export type Collation = 'latin1_swedish_ci' | 'latin1_bin' | 'utf8mb3_general_ci' | 'utf8mb4_general_ci';

export interface Column {
  type: 'int' | 'tinyint' | 'varchar' | 'char' | 'text' | 'datetime';
  /** Characters at most (varchar, char). A text holds 65,535 bytes in its charset. */
  length?: number;
  charset?: Charset;
  collation?: Collation;
  nullable?: true;
}

export interface TableSchema {
  columns: Record<string, Column>;
  /** The unique keys (the primary key aside), as lists of columns. */
  unique: string[][];
}

const int: Column = { type: 'int' };
const flag: Column = { type: 'tinyint' };
const datetime: Column = { type: 'datetime' };
const latin1 = (type: 'varchar' | 'char', length: number): Column => ({
  type,
  length,
  charset: 'latin1',
  collation: 'latin1_swedish_ci',
});
const latin1Bin = (type: 'varchar' | 'text', length?: number): Column => ({
  type,
  ...(length ? { length } : {}),
  charset: 'latin1',
  collation: 'latin1_bin',
});
const latin1Text: Column = { type: 'text', charset: 'latin1', collation: 'latin1_swedish_ci' };
const utf8mb3 = (type: 'varchar' | 'text', length?: number): Column => ({
  type,
  ...(length ? { length } : {}),
  charset: 'utf8mb3',
  collation: 'utf8mb3_general_ci',
});
const utf8mb4 = (length: number): Column => ({
  type: 'varchar',
  length,
  charset: 'utf8mb4',
  collation: 'utf8mb4_general_ci',
});

export const PMACONTROL_SCHEMA: Record<string, TableSchema> = {
  client: {
    columns: {
      id: int,
      libelle: latin1('varchar', 100),
      logo: latin1('varchar', 250),
      date: datetime,
      is_monitored: int,
      is_display: int,
    },
    unique: [['libelle']],
  },
  environment: {
    columns: {
      id: int,
      libelle: latin1('varchar', 20),
      key: latin1('char', 13),
      class: latin1('varchar', 50),
      letter: latin1('char', 1),
    },
    unique: [['libelle']],
  },
  tag: {
    columns: { id: int, name: latin1('varchar', 50), color: latin1('varchar', 20), background: latin1('varchar', 20) },
    unique: [['name']],
  },
  ssh_key: {
    columns: {
      id: int,
      name: latin1('varchar', 64),
      added_on: datetime,
      fingerprint: latin1('char', 100),
      user: latin1('varchar', 64),
      public_key: latin1Text,
      private_key: latin1Text,
      type: { ...latin1('varchar', 20), nullable: true },
      bit: int,
      comment: latin1('varchar', 255),
    },
    unique: [['fingerprint', 'user']],
  },
  mysql_server: {
    columns: {
      id: int,
      is_deleted: flag,
      id_client: int,
      id_environment: int,
      name: utf8mb3('varchar', 100),
      display_name: utf8mb4(100),
      ip: latin1Bin('varchar', 255),
      hostname: utf8mb4(200),
      login: utf8mb3('varchar', 32),
      passwd: latin1Bin('varchar', 255),
      database: utf8mb4(64),
      is_password_crypted: int,
      is_ssl: int,
      port: int,
      ssh_nat: latin1Bin('varchar', 64),
      ssh_port: int,
      ssh_login: latin1Bin('text'),
      is_sudo: int,
      is_root: int,
      is_monitored: int,
      is_proxy: int,
      is_vip: flag,
      is_acknowledged: int,
    },
    unique: [['name'], ['ip', 'port']],
  },
  link__mysql_server__tag: {
    columns: { id: int, id_mysql_server: int, id_tag: int },
    unique: [['id_mysql_server', 'id_tag']],
  },
  link__mysql_server__ssh_key: {
    columns: { id: int, id_mysql_server: int, id_ssh_key: int, added_on: datetime, active: int },
    unique: [],
  },
  backup_storage_area: {
    columns: {
      id: int,
      id_ssh_key: int,
      id_geolocalisation_city: int,
      id_geolocalisation_country: int,
      ip: utf8mb3('varchar', 15),
      port: int,
      path: utf8mb3('text'),
      libelle: utf8mb3('varchar', 64),
    },
    unique: [],
  },
  alias_dns: {
    columns: {
      id: int,
      id_mysql_server: { ...int, nullable: true },
      dns: latin1('varchar', 200),
      port: int,
    },
    unique: [['dns', 'port']],
  },
  webservice_user: {
    columns: {
      id: int,
      id_client: int,
      user: latin1('varchar', 64),
      host: latin1('varchar', 255),
      password: latin1('varchar', 255),
      is_enabled: int,
    },
    unique: [['user', 'host']],
  },
};

/** The range of MariaDB's INT and TINYINT (signed). */
export const INT_RANGE = { int: [-2_147_483_648, 2_147_483_647], tinyint: [-128, 127] } as const;

/** A text column's room in bytes (65,535), as a VARCHAR's is in characters. */
export const TEXT_BYTES = 65_535;
