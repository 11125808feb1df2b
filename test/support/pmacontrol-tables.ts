import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Connection, createConnection } from 'mysql2/promise';
import * as assert from 'uvu/assert';
import { resourceOf } from '../../src/domain/resources.js';
import { createPmaControlCrypt, readPmaControlCryptKey } from '../../src/pmacontrol/crypt.js';
import { MariadbPmaControlDatabase } from '../../src/pmacontrol/mariadb-tables.js';
import { PmaControlProjection } from '../../src/pmacontrol/projection.js';
import { documentFromTables, type PmaControlTables, TABLES } from '../../src/pmacontrol/tables.js';
import { WriteValidator } from '../../src/schemas/validator.js';
import { type Harness, send, startHarness } from './harness.js';
import { writeCryptConfig } from './php.js';
import { ROOT, tempDir } from './process.js';

export const SCHEMA = readFileSync(join(ROOT, 'test/fixtures/pmacontrol-schema.sql'), 'utf8');

/** A database of its own with PmaControl's schema, on the server of `url`. */
export async function withSchema(url: string): Promise<void> {
  const connection = await createConnection({ uri: url, multipleStatements: true });
  await connection.query(SCHEMA);
  await connection.end();
}

/**
 * A service in this process (the harness: every answer checked against the OpenAPI document) whose
 * projection writes PmaControl's tables at `dbUrl`; anonymous callers are `anonymousRole`.
 */
export async function projectedHarness(dbUrl: string, anonymousRole: 'reader' | 'writer' = 'reader'): Promise<Harness> {
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(writeCryptConfig(tempDir())));
  const validator = new WriteValidator();
  return startHarness({
    access: { anonymousRole, corsOrigins: [] },
    pmacontrol: (service, logger) =>
      new PmaControlProjection({
        service,
        database: new MariadbPmaControlDatabase(dbUrl),
        crypt,
        logger,
        leaseMs: 2000,
        driftMs: 0,
        parse: (resource, mode, body) => validator.parse(resource, mode, body).input as typeof body,
      }),
  });
}

/** Until the projection has applied the whole log (and holds the lease). */
export async function caughtUp(h: Harness): Promise<Record<string, unknown>> {
  let status = (await h.request('GET', '/fr/api/pmacontrol/status')).body;
  for (let i = 0; i < 250 && (status.lag !== 0 || !status.applying || status.position === 0); i++) {
    await new Promise((r) => setTimeout(r, 20));
    status = (await h.request('GET', '/fr/api/pmacontrol/status')).body;
  }
  assert.equal([status.lag, status.applying, status.blocked], [0, true, null], JSON.stringify(status));
  return status;
}

/** The rows a query of PmaControl's database answers. */
export const tableRows = async (connection: Connection, sql: string, values: unknown[] = []) =>
  (await connection.query(sql, values))[0] as Record<string, unknown>[];

/** The projection's status, as a service process answers it. */
export const projectionStatus = async (service: { url: string }) =>
  (await send(service.url, 'GET', '/fr/api/pmacontrol/status')).body;

/** Waits (10 s at most) until the projection's status says what `until` looks for (blocked, or caught up). */
export async function settled(service: { url: string }, until: (s: Record<string, unknown>) => boolean) {
  let last = await projectionStatus(service);
  for (let i = 0; i < 200 && !until(last); i++) {
    await new Promise((r) => setTimeout(r, 50));
    last = await projectionStatus(service);
  }
  assert.ok(until(last), JSON.stringify(last));
  return last;
}

/** Every row of PmaControl's tables the service writes, by table. */
export async function readTables(url: string): Promise<PmaControlTables> {
  const connection = await createConnection({ uri: url, dateStrings: true });
  try {
    const tables: PmaControlTables = {};
    for (const table of TABLES) {
      const [rows] = (await connection.query(`SELECT * FROM \`${table}\` ORDER BY id`)) as unknown as [
        Record<string, unknown>[],
      ];
      tables[table] = rows;
    }
    return tables;
  } finally {
    await connection.end();
  }
}

type Entry = Record<string, unknown>;

/**
 * PmaControl's rows read back the way `import-pmacontrol` reads them (the other direction of the same
 * declarations, ciphertexts opened with PmaControl's key) and compared with what the API exports:
 * every field of every entry, soft deletes included; secrets compared through the secret routes.
 * Undefined when equal, else the first difference.
 */
export async function differences(
  dbUrl: string,
  serviceUrl: string,
  cryptConfig: string,
  headers: Record<string, string> = {},
): Promise<string | undefined> {
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(cryptConfig));
  const { document, problems } = documentFromTables(await readTables(dbUrl), (c) => crypt.decrypt(c));
  if (problems.length > 0) return `rows that do not read: ${JSON.stringify(problems)}`;
  const exported = (await send(serviceUrl, 'GET', '/fr/api/export', { headers })).body.resources;
  for (const [name, rows] of Object.entries(document.resources) as [string, Entry[]][]) {
    const entries = exported[name] as Entry[];
    const ids = (list: Entry[]) => list.map((e) => e.id).join(',');
    if (ids(rows) !== ids(entries)) return `${name}: rows ${ids(rows)} but entries ${ids(entries)}`;
    const secrets = resourceOf(name as 'servers').secretFields as readonly string[];
    for (const [i, row] of rows.entries()) {
      for (const [field, value] of Object.entries(row)) {
        if (secrets.includes(field)) continue;
        const expected = entries[i]![field];
        // The import reads PmaControl's flags as 0 and 1, which its validation makes booleans.
        const read = typeof expected === 'boolean' && typeof value === 'number' ? value !== 0 : value;
        if (JSON.stringify(read) !== JSON.stringify(expected)) {
          return `${name}/${row.id} ${field}: row ${JSON.stringify(read)}, entry ${JSON.stringify(expected)}`;
        }
      }
      for (const field of secrets) {
        const revealed = await send(serviceUrl, 'GET', `/fr/api/config/${name}/${row.id}/secret`, { headers });
        if (revealed.body[field] !== row[field]) return `${name}/${row.id} ${field} differs`;
      }
    }
  }
  return undefined;
}

/** Waits until PmaControl's tables say what the API says, at most `ms`; the time it took. */
export async function equalWithin(
  ms: number,
  dbUrl: string,
  serviceUrl: string,
  cryptConfig: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const started = Date.now();
  let last: string | undefined = 'not compared';
  while (Date.now() - started < ms) {
    last = await differences(dbUrl, serviceUrl, cryptConfig, headers);
    if (last === undefined) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.unreachable(`PmaControl's tables differ after ${ms} ms: ${last}`);
  return ms;
}
