import type { PoolConnection, RowDataPacket } from 'mysql2/promise';

/**
 * The schema, as numbered migrations. Each runs once, in order, and is recorded in
 * `pmacontrol_schema`; a migration is written so that running it again changes nothing (instances
 * starting together may both try it). Never edit a published migration: add the next one.
 */
const MIGRATIONS: { version: number; statements: string[] }[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE IF NOT EXISTS pmacontrol_events (
        position    BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        stream      VARCHAR(200)    NOT NULL,
        revision    BIGINT UNSIGNED NOT NULL,
        type        VARCHAR(200)    NOT NULL,
        data        LONGTEXT        NOT NULL,
        metadata    LONGTEXT        NOT NULL,
        recorded_at TIMESTAMP(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
        UNIQUE KEY stream_revision (stream, revision)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    ],
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Brings the database to the latest schema; refuses a database written by a newer version. */
export async function migrate(connection: PoolConnection): Promise<void> {
  await connection.query(
    `CREATE TABLE IF NOT EXISTS pmacontrol_schema (
      version    INT         NOT NULL PRIMARY KEY,
      applied_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
    ) ENGINE=InnoDB`,
  );
  const [rows] = await connection.query<RowDataPacket[]>('SELECT MAX(version) AS version FROM pmacontrol_schema');
  const current = Number(rows[0].version ?? 0);
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `the MariaDB event store has schema version ${current}, newer than this release knows (${SCHEMA_VERSION}): upgrade this service`,
    );
  }
  for (const migration of MIGRATIONS.filter((m) => m.version > current)) {
    for (const statement of migration.statements) await connection.query(statement);
    await connection.query('INSERT IGNORE INTO pmacontrol_schema (version) VALUES (?)', [migration.version]);
  }
}
