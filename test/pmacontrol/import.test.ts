import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Connection, createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPmaControlCrypt, readPmaControlCryptKey } from '../../src/pmacontrol/crypt.js';
import { cipherColumns, KEPT } from '../../src/pmacontrol/rows.js';
import { TABLES } from '../../src/pmacontrol/tables.js';
import { BASE } from '../support/harness.js';
import { makeKey } from '../support/keys.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { phpAvailable, pmacontrolEncrypt, writeCryptConfig } from '../support/php.js';
import { readTables, withSchema } from '../support/pmacontrol-tables.js';
import { ROOT, runCli, servedDataDir, spawnService, tempDir } from '../support/process.js';

const url = await mariadbUrl();
const php = phpAvailable();
const SCHEMA = readFileSync(join(ROOT, 'test/fixtures/pmacontrol-schema.sql'), 'utf8');

/** PmaControl's six environments, as its installer creates them. */
const ENVIRONMENTS = [
  [1, 'Production', 'prod', 'danger', 'P'],
  [2, 'Preprod', 'preprod', 'warning', 'U'],
  [3, 'Recipe', 'recette', 'default', 'R'],
  [4, 'Integration', 'integration', 'info', 'I'],
  [5, 'Developpement', 'dev', 'success', 'D'],
  [6, 'Test', 'test', 'primary', 'T'],
  [7, 'Staging', 'stg', 'info', 'S'],
];

/** A PmaControl database with every table filled: crypted secrets made by PHP, tags, a soft-deleted server. */
async function pmacontrolDatabase(cryptConfig: string) {
  const db = await freshDatabase(url!);
  const key = makeKey('ed25519', 2048, 'backup@pmacontrol');
  const [pw10, pw12, privateKey, publicKey] = pmacontrolEncrypt(cryptConfig, [
    'S3cr3t-10',
    'pässwörd 12',
    key.privateKey,
    key.publicKey,
  ]);
  const connection = await createConnection({ uri: db.url, multipleStatements: true });
  await connection.query(SCHEMA);
  await connection.query(
    "INSERT INTO client (id, libelle, logo, is_monitored, is_display, date) VALUES (1, ?, ?, 0, 1, '2020-01-01 08:00:00'), (99, ?, ?, 1, 0, '2020-01-02 08:00:00')",
    ['ACME', 'acme.png', 'Default', ''],
  );
  await connection.query('INSERT INTO environment VALUES ?', [ENVIRONMENTS]);
  await connection.query('INSERT INTO tag VALUES (3, ?, ?, ?), (5, ?, ?, ?)', [
    'prod',
    '#FF0000',
    '#000000',
    'galera',
    '#00ff00',
    '#FFFFFF',
  ]);
  await insertServers(connection, pw10!, pw12!);
  await connection.query(
    "INSERT INTO ssh_key (id, name, added_on, fingerprint, user, public_key, private_key, type, bit, comment) VALUES (4, 'backup', '2024-03-01 10:00:00', ?, 'root', ?, ?, 'ED25519', 256, 'backup@pmacontrol')",
    [legacyFingerprint(key.publicKey), publicKey, privateKey],
  );
  await connection.query("INSERT INTO backup_storage_area VALUES (2, 4, 0, 0, '10.1.1.1', 22, '/srv/backups', 'main')");
  await connection.query("INSERT INTO link__mysql_server__ssh_key VALUES (1, 10, 4, '2024-03-02 11:00:00', 1)");
  await connection.query(
    "INSERT INTO alias_dns (id, id_mysql_server, dns, port) VALUES (8, 10, 'primary.db.example.net', 3306)",
  );
  return { db, connection, key };
}

/** PmaControl's own form of an SSH key's fingerprint: SHA-1 of the key text after its first 8 characters. */
const legacyFingerprint = (publicKey: string) =>
  createHash('sha1').update(publicKey.slice(8)).digest('hex').toUpperCase();

/** Three servers: crypted passwords, flags set, a soft-deleted one with a plain password, tags linked. */
async function insertServers(connection: Connection, pw10: string, pw12: string) {
  const server =
    'INSERT INTO mysql_server (id, id_client, id_environment, name, display_name, ip, hostname, login, passwd, `database`, is_password_crypted, port';
  await connection.query(
    `${server}, ssh_nat, ssh_port, ssh_login, is_ssl, is_sudo, is_root, is_proxy, is_vip, is_acknowledged) VALUES (10, 1, 1, 'db10', 'Primary', '10.0.0.10', 'db10.example.net', 'pmacontrol', ?, 'mysql', 1, 3306, 'bastion:2222', 2222, 'admin', 1, 1, 0, 0, 1, 7)`,
    [pw10],
  );
  await connection.query(
    `${server}, is_deleted) VALUES (11, 1, 7, 'db11', '', '10.0.0.11', '', 'pmacontrol', 'plain-11', 'mysql', 0, 3307, 1)`,
  );
  await connection.query(
    `${server}) VALUES (12, 99, 2, 'db12', 'db12', 'db12.example.net', '', 'monitor', ?, 'mysql', 1, 3306)`,
    [pw12],
  );
  await connection.query(
    'INSERT INTO link__mysql_server__tag (id_mysql_server, id_tag) VALUES (10, 3), (10, 5), (12, 5)',
  );
}

/** Waits until the service has written everything into PmaControl's tables. */
async function waitCaughtUp(serviceUrl: string) {
  let status: { lag: number; position: number; blocked?: string | null } = { lag: -1, position: 0 };
  for (let i = 0; i < 200 && (status.lag !== 0 || status.position === 0); i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = await fetch(`${serviceUrl}/fr/api/pmacontrol/status`).then((r) => r.json());
  }
  return status;
}

const get = (service: { url: string }, path: string, headers: Record<string, string> = {}) =>
  fetch(`${service.url}${path}`, { headers }).then((r) => r.json());

type Service = { url: string };

/** Every mapped column of the three servers, their tags, deleted state and opened passwords. */
async function checkServers(service: Service, auth: Record<string, string>) {
  const db10 = (await get(service, `${BASE}/servers/10`)).item;
  assert.equal(
    [db10.id_client, db10.id_environment, db10.name, db10.display_name, db10.ip, db10.hostname, db10.login, db10.port],
    [1, 1, 'db10', 'Primary', '10.0.0.10', 'db10.example.net', 'pmacontrol', 3306],
  );
  assert.equal(
    [
      db10.ssh_nat,
      db10.ssh_port,
      db10.ssh_login,
      db10.is_ssl,
      db10.is_sudo,
      db10.is_root,
      db10.is_vip,
      db10.is_acknowledged,
    ],
    ['bastion:2222', 2222, 'admin', true, true, false, true, 7],
  );
  assert.equal([db10.tags, db10.is_deleted, db10.database], [[3, 5], false, 'mysql']);
  const db11 = (await get(service, `${BASE}/servers/11`)).item;
  assert.equal([db11.is_deleted, db11.display_name, db11.port, db11.id_environment], [true, 'db11', 3307, 7]);
  assert.is(db11.ssh_login, '', "PmaControl's default '' is an empty value");
  assert.equal((await get(service, `${BASE}/servers/12`)).item.tags, [5]);
  assert.equal((await get(service, `${BASE}/servers/10/secret`, auth)).passwd, 'S3cr3t-10');
  assert.equal((await get(service, `${BASE}/servers/11/secret`, auth)).passwd, 'plain-11');
  assert.equal((await get(service, `${BASE}/servers/12/secret`, auth)).passwd, 'pässwörd 12');
}

/** The SSH key (its private key opened), the storage area, the client, an environment, the alias, the actor. */
async function checkTheRest(
  service: Service,
  auth: Record<string, string>,
  key: { privateKey: string; publicKey: string },
) {
  assert.is((await get(service, `${BASE}/ssh-keys/4/secret`, auth)).private_key.trim(), key.privateKey.trim());
  const sshKey = (await get(service, `${BASE}/ssh-keys/4`)).item;
  assert.equal(
    [sshKey.name, sshKey.user, sshKey.type, sshKey.comment, sshKey.public_key],
    ['backup', 'root', 'ED25519', 'backup@pmacontrol', key.publicKey],
    'the public key PmaControl stored encrypted is opened',
  );
  const area = (await get(service, `${BASE}/storage-areas/2`)).item;
  assert.equal(
    [area.id_ssh_key, area.ip, area.path, area.libelle, area.id_geolocalisation_city],
    [4, '10.1.1.1', '/srv/backups', 'main', null],
  );
  const client = (await get(service, `${BASE}/clients/1`)).item;
  assert.equal([client.libelle, client.logo, client.is_monitored], ['ACME', 'acme.png', false]);
  assert.equal((await get(service, `${BASE}/environments/7`)).item.key, 'stg');
  assert.equal((await get(service, `${BASE}/aliases/8`)).item.dns, 'primary.db.example.net');
  const changes = await get(service, '/fr/api/changes?resource=servers&id=10');
  const written = changes.items.filter((c: { type: string }) => c.type !== 'SecretRevealed');
  assert.equal([...new Set(written.map((c: { actor: string }) => c.actor))], ['import-pmacontrol']);
  const positions = new Set(
    (await get(service, '/fr/api/changes?actor=import-pmacontrol&limit=1000')).items.map(
      (c: { request_id: string }) => c.request_id,
    ),
  );
  assert.is(positions.size, 1, 'one import, one request');
}

if (!url) skipWithoutMariadb('import-pmacontrol');
else {
  const it = suite(
    'import-pmacontrol: an existing PmaControl database, ids kept, one append, every field through the API',
  );
  const test = php ? it : it.skip;

  test('dry run, then the import; every field compared through the API, secrets opened and sealed', async () => {
    const cryptConfig = writeCryptConfig(tempDir());
    const { db, connection, key } = await pmacontrolDatabase(cryptConfig);
    try {
      const env = { DATA_DIR: await servedDataDir() };
      const args = ['import-pmacontrol', '--from', db.url, '--crypt-key-file', cryptConfig];
      const dry = await runCli([...args, '--dry-run'], env);
      assert.equal(
        [dry.code, dry.stdout.trim()],
        [0, '10 created, 1 updated, 6 unchanged (would be recorded)'],
        dry.stderr,
      );
      assert.match(dry.stderr, 'mysql_server: 3 rows');
      const run = await runCli(args, env);
      assert.equal(
        [run.code, run.stdout.trim()],
        [0, '10 created, 1 updated, 6 unchanged (were recorded)'],
        run.stderr,
      );
      assert.not.ok(run.stderr.includes(new URL(db.url).password || 'S3cr3t-10'));

      const issued = await runCli(['token', 'create', '--name', 'platform', '--role', 'reader', '--secrets'], env);
      const auth = { Authorization: `Bearer ${issued.stdout.trim().split('\n').pop()}` };
      const service = await spawnService(env);
      try {
        await checkServers(service, auth);
        await checkTheRest(service, auth, key);
      } finally {
        await service.stop();
      }
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  test('problems: every one with its table and row id, nothing recorded', async () => {
    const cryptConfig = writeCryptConfig(tempDir());
    const { db, connection } = await pmacontrolDatabase(cryptConfig);
    try {
      await connection.query('SET FOREIGN_KEY_CHECKS = 0');
      await connection.query(
        "INSERT INTO mysql_server (id, id_client, id_environment, name, display_name, ip, login, passwd, `database`, is_password_crypted, port) VALUES (13, 1, 1, 'db13', '', '999.1.1.1', 'x', 'pw', 'mysql', 0, 3306)",
      );
      await connection.query(
        "INSERT INTO mysql_server (id, id_client, id_environment, name, display_name, ip, login, passwd, `database`, is_password_crypted, port) VALUES (14, 1, 1, 'db14', '', '10.0.0.14', 'x', 'not-a-ciphertext', 'mysql', 1, 3306)",
      );
      await connection.query('INSERT INTO link__mysql_server__tag (id_mysql_server, id_tag) VALUES (12, 77)');
      const env = { DATA_DIR: await servedDataDir() };
      const run = await runCli(['import-pmacontrol', '--from', db.url, '--crypt-key-file', cryptConfig], env);
      assert.is(run.code, 1, run.stdout);
      assert.match(run.stderr, 'mysql_server id=13 ip:');
      assert.match(run.stderr, 'mysql_server id=14 passwd:');
      assert.match(
        run.stderr,
        'link__mysql_server__tag id=id_mysql_server=12 id_tag=77: links to tag 77, which does not exist',
      );
      assert.match(run.stderr, 'nothing was imported');
      const without = await runCli(['import-pmacontrol', '--from', db.url, '--dry-run'], env);
      assert.match(without.stderr, "mysql_server id=10 passwd: is stored encrypted; give PmaControl's key");
      const tokens = await runCli(['token', 'list', '--json'], env);
      assert.is(tokens.code, 0);
      const service = await spawnService(env);
      try {
        assert.equal((await get(service, `${BASE}/servers`)).items, [], 'nothing was half-imported');
      } finally {
        await service.stop();
      }
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  /** Rows an old PmaControl holds and the service refuses: each kind once, beside valid ones. */
  async function insertInvalidRows(connection: Connection) {
    await connection.query('SET FOREIGN_KEY_CHECKS = 0');
    const server =
      'INSERT INTO mysql_server (id, id_client, id_environment, name, display_name, ip, login, passwd, `database`, port, is_password_crypted';
    await connection.query(`${server}) VALUES (13, 1, 1, 'db13', '', '999.1.1.1', 'x', 'pw', 'mysql', 3306, 0)`);
    await connection.query(
      `${server}) VALUES (14, 1, 1, 'db14', '', '10.0.0.14', 'x', 'not-a-ciphertext', 'mysql', 3306, 1)`,
    );
    await connection.query(`${server}) VALUES (15, 1, 1, 'db15', '', '10.0.0.15', ?, 'pw', 'mysql', 3306, 0)`, ["''"]);
    await connection.query('INSERT INTO link__mysql_server__tag (id_mysql_server, id_tag) VALUES (12, 77), (404, 3)');
    await connection.query(
      "INSERT INTO alias_dns (id, id_mysql_server, dns, port) VALUES (9, NULL, 'nowhere.example.net', 3306), (20, 13, 'db13.example.net', 3306)",
    );
  }

  test('--skip-invalid: the valid rows imported, every other one reported with why; without it, all listed', async () => {
    const cryptConfig = writeCryptConfig(tempDir());
    const { db, connection } = await pmacontrolDatabase(cryptConfig);
    try {
      await insertInvalidRows(connection);
      const env = { DATA_DIR: await servedDataDir() };
      const args = ['import-pmacontrol', '--from', db.url, '--crypt-key-file', cryptConfig];
      const refused = await runCli(args, env);
      assert.is(refused.code, 1, refused.stdout);
      const expected = [
        'mysql_server id=13 ip:',
        'mysql_server id=14 passwd:',
        "mysql_server id=15 login: is PmaControl's empty value '', and a value is required",
        'link__mysql_server__tag id=id_mysql_server=12 id_tag=77: links to tag 77, which does not exist',
        'link__mysql_server__tag id=id_mysql_server=404 id_tag=3: links to mysql_server 404, which does not exist',
        'alias_dns id=9 id_mysql_server:',
      ];
      for (const line of expected) assert.match(refused.stderr, line);
      assert.match(refused.stderr, 'nothing was imported');

      const report = join(tempDir(), 'report.json');
      const run = await runCli([...args, '--skip-invalid', '--report', report], env);
      assert.is(run.code, 0, run.stderr);
      assert.is(run.stdout.trim(), '10 created, 1 updated, 6 unchanged (were recorded); 7 skipped');
      for (const line of expected) assert.match(run.stderr, line);
      assert.match(run.stderr, 'alias_dns id=20 id_mysql_server:', 'an alias of a skipped server is skipped too');
      const written = JSON.parse(readFileSync(report, 'utf8'));
      assert.equal([written.created, written.skipped.length], [10, 7]);
      assert.ok(written.skipped.every((row: { table: string; message: string }) => row.table && row.message));

      const service = await spawnService(env);
      try {
        const servers = (await get(service, `${BASE}/servers`)).items.map((s: { id: number }) => s.id);
        assert.equal(servers, [10, 11, 12], 'the valid servers, and only them');
        assert.equal((await get(service, `${BASE}/servers/12`)).item.tags, [5], 'the link to a missing tag left out');
        assert.equal(
          (await get(service, `${BASE}/aliases`)).items.map((a: { id: number }) => a.id),
          [8],
        );
      } finally {
        await service.stop();
      }
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  /** Columns that say how a value is kept, or when, rather than what it is. */
  const REPRESENTATION = new Set([
    'is_password_crypted',
    'added_on',
    'date',
    'date_refresh',
    'fingerprint',
    'created_at',
    'updated_at',
  ]);

  /**
   * Every row of every table the service writes, as what it says: ciphertexts opened (a password
   * PmaControl kept in clear taken as it is), a link row without its own counter.
   */
  async function keptRows(url: string, cryptConfig: string) {
    const crypt = createPmaControlCrypt(readPmaControlCryptKey(cryptConfig));
    const kept: Record<string, unknown[]> = {};
    for (const [table, rows] of Object.entries(await readTables(url))) {
      const declared = KEPT.find((k) => k.table.table === table);
      const ciphers = declared ? cipherColumns(declared) : [];
      kept[table] = rows.map((row) => {
        const copy: Record<string, unknown> = {};
        for (const [column, value] of Object.entries(row)) {
          if (REPRESENTATION.has(column) || (!declared && column === 'id')) continue;
          const clear =
            typeof value !== 'string' ||
            value === '' ||
            (column === 'passwd' && Number(row.is_password_crypted) === 0) ||
            /^ssh-|-----BEGIN/.test(value);
          copy[column] = ciphers.includes(column) && !clear ? crypt.decrypt(value).trim() : value;
        }
        return copy;
      });
    }
    return kept;
  }

  /** Every row of PmaControl's tables, every column, and how many versions its system-versioned tables hold. */
  async function snapshot(dbUrl: string) {
    const connection = await createConnection({ uri: dbUrl, dateStrings: true });
    try {
      const all: Record<string, unknown> = {};
      for (const table of [...TABLES, 'webservice_user']) {
        const [rows] = (await connection.query(`SELECT * FROM \`${table}\` ORDER BY id`)) as unknown as [unknown[]];
        all[table] = rows;
      }
      for (const table of ['mysql_server', 'alias_dns']) {
        const [[row]] = (await connection.query(
          `SELECT COUNT(*) AS n FROM \`${table}\` FOR SYSTEM_TIME ALL`,
        )) as unknown as [[{ n: number }]];
        all[`${table} versions`] = row.n;
      }
      return all;
    } finally {
      await connection.end();
    }
  }

  test('an import, then the projection on the same database: not a row written, no history row, forms kept', async () => {
    const cryptConfig = writeCryptConfig(tempDir());
    const { db, connection } = await pmacontrolDatabase(cryptConfig);
    try {
      // Rows as PmaControl itself leaves them: its literal '' for no SSH login, an empty display name.
      await connection.query("UPDATE mysql_server SET ssh_login = ?, display_name = '' WHERE id = 12", ["''"]);
      const before = await snapshot(db.url);
      const env = { DATA_DIR: await servedDataDir() };
      const run = await runCli(['import-pmacontrol', '--from', db.url, '--crypt-key-file', cryptConfig], env);
      assert.is(run.code, 0, run.stderr);
      const service = await spawnService({ ...env, PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig });
      try {
        const status = await waitCaughtUp(service.url);
        assert.equal([status.lag, status.blocked], [0, null], JSON.stringify(status));
        const server10 = (await get(service, `${BASE}/servers/10`)).item;
        assert.equal(server10.ssh_keys, [4], 'link__mysql_server__ssh_key read');
        assert.is((await get(service, `${BASE}/clients/99`)).item.is_display, false, 'is_display carried');
        const area = (await get(service, `${BASE}/storage-areas/2`)).item;
        assert.equal([area.id_geolocalisation_city, area.id_geolocalisation_country], [null, null]);
      } finally {
        await service.stop();
      }
      // client.date, ssh_key.added_on, the 40-hex fingerprint, link row ids, updated_at, history: as they were.
      assert.equal(await snapshot(db.url), before);
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  test('an import, then the service writing into an empty copy of the schema, gives back the same rows', async () => {
    const cryptConfig = writeCryptConfig(tempDir());
    const { db, connection } = await pmacontrolDatabase(cryptConfig);
    const empty = await freshDatabase(url!);
    try {
      // PmaControl writes its flags and literal '' as it does; this service writes what they mean.
      await connection.query("UPDATE mysql_server SET ssh_login = '' WHERE ssh_login = ?", ["''"]);
      await connection.query("UPDATE mysql_server SET display_name = name WHERE display_name = ''");
      const env = { DATA_DIR: await servedDataDir() };
      const run = await runCli(['import-pmacontrol', '--from', db.url, '--crypt-key-file', cryptConfig], env);
      assert.is(run.code, 0, run.stderr);
      await withSchema(empty.url);
      const service = await spawnService({
        ...env,
        PMACONTROL_DB_URL: empty.url,
        PMACONTROL_CRYPT_KEY_FILE: cryptConfig,
      });
      try {
        const { lag } = await waitCaughtUp(service.url);
        assert.is(lag, 0);
      } finally {
        await service.stop();
      }
      assert.equal(await keptRows(empty.url, cryptConfig), await keptRows(db.url, cryptConfig));
    } finally {
      await connection.end();
      await db.drop();
      await empty.drop();
    }
  });

  it("a DATA_DIR that is not the service's is refused before any of PmaControl's tables is read", async () => {
    const missing = { DATA_DIR: join(tempDir(), 'typo') };
    // A database that does not answer: reading it first would fail on the connection instead.
    const run = await runCli(['import-pmacontrol', '--from', 'mysql://nobody@127.0.0.1:1/pmacontrol'], missing);
    assert.is(run.code, 1);
    assert.match(run.stderr, /DATA_DIR .*typo does not exist/);
    assert.not.match(run.stderr + run.stdout, /ECONNREFUSED|rows/);
  });

  it.run();
}
