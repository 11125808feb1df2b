import { type Connection, createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { writeCryptConfig } from '../support/php.js';
import { settled, tableRows, withSchema } from '../support/pmacontrol-tables.js';
import { runCli, spawnService, tempDir } from '../support/process.js';
import { tokenKnown } from '../support/receiver.js';

const url = await mariadbUrl();
const it = suite("PmaControl's own rows: never written over, and what its columns and collations hold");

/** PmaControl's tags and environment as its installer ships them (tags 1–20, environment 9). */
const SHIPPED_TAGS = [
  'MariaDB',
  'Docker',
  'MySQL',
  'Percona',
  'ProxySQL',
  'MaxScale',
  'prodCluster',
  'innodb-cluster',
  'primary',
  'mysql-8.4.8',
  'secondary',
  'mysql-router',
  'proxy',
  'rw',
  'mysqlrouter-ha',
  'ro',
  'rw-split',
  'sql',
  'keepalived',
  'vip',
].map((name, i) => [i + 1, name, '#ffffff', '#434a5e']);

async function pmacontrol(): Promise<{ db: { url: string; drop: () => Promise<void> }; connection: Connection }> {
  const db = await freshDatabase(url!);
  await withSchema(db.url);
  const connection = await createConnection({ uri: db.url, dateStrings: true });
  return { db, connection };
}

/** PmaControl's installer rows, and a server of its own that carries its tag 1. */
async function shipped(connection: Connection): Promise<void> {
  await connection.query('INSERT INTO tag VALUES ?', [SHIPPED_TAGS]);
  await connection.query("INSERT INTO environment VALUES (9, 'Docker', 'docker', 'info', 'D')");
  await connection.query("INSERT INTO client (id, libelle) VALUES (1, 'PmaCo')");
  await connection.query(
    "INSERT INTO mysql_server (id, id_client, id_environment, name, display_name, ip, login, passwd, `database`, is_password_crypted, port) VALUES (1, 1, 9, 'pma-own', 'pma-own', '10.9.9.9', 'root', 'x', 'mysql', 0, 3306)",
  );
  await connection.query('INSERT INTO link__mysql_server__tag (id_mysql_server, id_tag) VALUES (1, 1)');
}

/** An admin token issued by the CLI; `urls`: services that must know it first (it was issued while they run). */
async function admin(env: Record<string, string>, urls: string[] = []) {
  const issued = await runCli(['token', 'create', '--name', 'admin', '--role', 'admin'], env);
  assert.is(issued.code, 0, issued.stderr);
  return tokenKnown(urls, issued.stdout.trim().split('\n').pop()!);
}

const tag = (name: string) => ({ name, color: '#FFFFFF', background: '#000000' });

if (!url) skipWithoutMariadb("PmaControl's own rows");
else {
  it('a start over rows this service does not know: held back, listed, /readyz says why; nothing written over', async () => {
    const { db, connection } = await pmacontrol();
    const dataDir = tempDir();
    try {
      await shipped(connection);
      // The service's own tags 1–4, made before PmaControl's database was configured.
      const alone = await spawnService({ DATA_DIR: dataDir });
      try {
        for (const name of ['a', 'b', 'c', 'd']) {
          assert.is((await send(alone.url, 'POST', `${BASE}/tags`, { body: tag(name) })).status, 201);
        }
      } finally {
        await alone.stop();
      }
      const env = {
        DATA_DIR: dataDir,
        PMACONTROL_DB_URL: db.url,
        PMACONTROL_CRYPT_KEY_FILE: writeCryptConfig(tempDir()),
      };
      const service = await spawnService(env);
      try {
        const held = await settled(service, (s) => typeof s.blocked === 'string');
        for (const row of ['tag 1 "MariaDB"', 'tag 20 "vip"', 'environment 9 "Docker"', 'mysql_server 1 "pma-own"']) {
          assert.match(held.blocked, row);
        }
        assert.equal([held.position, held.applied_at], [0, null]);
        const ready = await send(service.url, 'GET', '/readyz');
        assert.equal([ready.status, ready.body.status], [503, 'not_ready']);
        assert.match(ready.body.reason, "PmaControl's tables cannot take the next batch");
        assert.not.match(ready.body.reason, 'MariaDB', 'no name of the inventory on a route open to anyone');
        // A new tag goes above PmaControl's own (its AUTO_INCREMENT), where no row of PmaControl's can be.
        const fifth = await send(service.url, 'POST', `${BASE}/tags`, { body: tag('e') });
        assert.equal([fifth.status, fifth.body.id], [201, 21]);
        await new Promise((r) => setTimeout(r, 500));
        const names = (await tableRows(connection, 'SELECT id, name FROM tag WHERE id <= 4 ORDER BY id')).map(
          (r) => r.name,
        );
        assert.equal(names, ['MariaDB', 'Docker', 'MySQL', 'Percona'], "PmaControl's tags are PmaControl's");
        assert.equal(await tableRows(connection, 'SELECT id_mysql_server, id_tag FROM link__mysql_server__tag'), [
          { id_mysql_server: 1, id_tag: 1 },
        ]);
        assert.equal(await tableRows(connection, 'SELECT position FROM pmacontrol_config_projection'), [
          { position: 0 },
        ]);
      } finally {
        await service.stop();
      }
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  it('those rows adopted: the projection goes on and writes none of them again', async () => {
    const { db, connection } = await pmacontrol();
    try {
      await shipped(connection);
      const env = {
        DATA_DIR: tempDir(),
        PMACONTROL_DB_URL: db.url,
        PMACONTROL_CRYPT_KEY_FILE: writeCryptConfig(tempDir()),
      };
      const service = await spawnService(env);
      try {
        await settled(service, (s) => typeof s.blocked === 'string');
        const before = await tableRows(connection, 'SELECT COUNT(*) AS n FROM mysql_server FOR SYSTEM_TIME ALL');
        const drift = (await send(service.url, 'GET', '/fr/api/pmacontrol/drift')).body.items;
        const theirs = drift.filter((item: { pmacontrol: unknown }) => item.pmacontrol === 'row');
        assert.is(theirs.length, 23, 'tags 1–20, environment 9, client 1, server 1');
        const adopted = await send(service.url, 'POST', '/fr/api/pmacontrol/drift/adopt', {
          body: { items: theirs.map(({ table, id }: { table: string; id: number }) => ({ table, id, column: null })) },
          headers: await admin(env, [service.url]),
        });
        assert.is(adopted.status, 200, adopted.text);
        const done = await settled(service, (s) => s.blocked === null && s.lag === 0 && s.position !== 0);
        assert.match(done.applied_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
        assert.is((await send(service.url, 'GET', '/readyz')).status, 200);
        assert.equal((await send(service.url, 'GET', `${BASE}/servers/1`)).body.item.tags, [1]);
        assert.equal(await tableRows(connection, 'SELECT COUNT(*) AS n FROM mysql_server FOR SYSTEM_TIME ALL'), before);
        assert.equal(await tableRows(connection, 'SELECT id, id_mysql_server, id_tag FROM link__mysql_server__tag'), [
          { id: 1, id_mysql_server: 1, id_tag: 1 },
        ]);
      } finally {
        await service.stop();
      }
    } finally {
      await connection.end();
      await db.drop();
    }
  });
}

it.run();
