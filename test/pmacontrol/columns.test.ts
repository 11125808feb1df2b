import { randomBytes } from 'node:crypto';
import { type Connection, createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { makeKey } from '../support/keys.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { writeCryptConfig } from '../support/php.js';
import { projectionStatus, settled, tableRows, withSchema } from '../support/pmacontrol-tables.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { tokenKnown } from '../support/receiver.js';

const url = await mariadbUrl();
const it = suite("PmaControl's columns: what they cannot hold is refused at the API, listed by pmacontrol-check");

type Db = { url: string; drop: () => Promise<void> };

async function pmacontrol(): Promise<{ db: Db; connection: Connection; cryptConfig: string }> {
  const db = await freshDatabase(url!);
  await withSchema(db.url);
  const connection = await createConnection({ uri: db.url, dateStrings: true });
  return { db, connection, cryptConfig: writeCryptConfig(tempDir()) };
}

const tag = (name: string) => ({ name, color: '#FFFFFF', background: '#000000' });
const server = (name: string, extra: Record<string, unknown> = {}) => ({
  id_client: 99,
  id_environment: 1,
  name,
  ip: `10.1.${name.length}.${Math.floor(Math.random() * 250) + 1}`,
  login: 'monitor',
  passwd: 'pw',
  ...extra,
});

/** The one problem of a 422, or the 409's detail. */
async function refused(service: ServiceProcess, method: string, path: string, body: Record<string, unknown>) {
  const reply = await send(service.url, method, `${BASE}/${path}`, { body });
  assert.ok(reply.status === 422 || reply.status === 409, `${reply.status} ${reply.text}`);
  return reply.status === 422
    ? { status: 422, field: reply.body.errors[0].field, message: reply.body.errors[0].message }
    : { status: 409, field: null, message: reply.body.detail };
}

/** Values PmaControl's columns cannot hold: each a 422 on its field, saying which column and why. */
async function columnRefusals(service: ServiceProcess): Promise<void> {
  const cases: [string, string, Record<string, unknown>, string, RegExp][] = [
    ['POST', 'tags', tag('東京-dc'), 'name', /PmaControl stores tag\.name in latin1, which has no "東"/],
    ['POST', 'clients', { libelle: 'Client 🚀' }, 'libelle', /client\.libelle in latin1/],
    ['POST', 'servers', server('db-🚀'), 'name', /mysql_server\.name in utf8mb3/],
    ['POST', 'servers', server('ack', { is_acknowledged: 2 ** 31 }), 'is_acknowledged', /INT: .* 2147483647/],
    ['POST', 'servers', server('long', { hostname: `${'h'.repeat(200)}.x` }), 'hostname', /VARCHAR\(200\)/],
    // A password PmaControl's ciphertext makes longer than its column (compressed first: random, it does not shrink).
    [
      'POST',
      'servers',
      server('pw', { passwd: randomBytes(150).toString('hex') }),
      'passwd',
      /encrypted, in VARCHAR\(255\)/,
    ],
  ];
  for (const [method, path, body, field, message] of cases) {
    const problem = await refused(service, method, path, body);
    assert.equal([problem.status, problem.field], [422, field], `${path} ${JSON.stringify(body).slice(0, 60)}`);
    assert.match(problem.message, message);
  }
}

/** A host name over backup_storage_area.ip's 15 characters; names latin1_swedish_ci takes for one. */
async function areaAndTwins(service: ServiceProcess): Promise<void> {
  const key = makeKey('ed25519', 2048, 'k@pmacontrol');
  const sshKey = await send(service.url, 'POST', `${BASE}/ssh-keys`, {
    body: { name: 'k', user: 'root', public_key: key.publicKey, private_key: key.privateKey },
  });
  assert.is(sshKey.status, 201, sshKey.text);
  const area = { id_ssh_key: sshKey.body.id, ip: 'backup-host.example.net', path: '/srv/b', libelle: 'main' };
  const areaProblem = await refused(service, 'POST', 'storage-areas', area);
  assert.equal(
    [areaProblem.field, areaProblem.message],
    ['ip', 'PmaControl stores backup_storage_area.ip as VARCHAR(15): 15 characters at most'],
  );
  // latin1_swedish_ci weighs Ü as Y and Å as [: one name for PmaControl, two for this service's own rule.
  for (const [first, second] of [
    ['Zürich', 'Zyrich'],
    ['[x', 'Åx'],
  ]) {
    const made = await send(service.url, 'POST', `${BASE}/tags`, { body: tag(first!) });
    assert.is(made.status, 201, made.text);
    const twin = await refused(service, 'POST', 'tags', tag(second!));
    assert.equal(twin.status, 409);
    assert.match(twin.message, `tags ${made.body.id} for PmaControl`);
  }
}

if (!url) skipWithoutMariadb("PmaControl's columns");
else {
  it('while its tables are written: a 422 on the field saying why, a 409 for a name its collation merges', async () => {
    const { db, connection, cryptConfig } = await pmacontrol();
    const env = { DATA_DIR: tempDir(), PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
    const service = await spawnService(env);
    try {
      await settled(service, (s) => s.lag === 0 && s.position !== 0);
      const head = (await projectionStatus(service)).log_position;
      await columnRefusals(service);
      await areaAndTwins(service);
      const after = await projectionStatus(service);
      assert.is(after.log_position, head + 3, 'only the SSH key and the two first tags were recorded');
      await settled(service, (s) => s.lag === 0 && s.blocked === null);
    } finally {
      await service.stop();
      await connection.end();
      await db.drop();
    }
  });

  it('written before the projection: pmacontrol-check lists them; the projection is held back, then goes on', async () => {
    const { db, connection, cryptConfig } = await pmacontrol();
    const dataDir = tempDir();
    try {
      const alone = await spawnService({ DATA_DIR: dataDir });
      let tokyo: number;
      let zyrich: number;
      try {
        tokyo = (await send(alone.url, 'POST', `${BASE}/tags`, { body: tag('東京-dc') })).body.id;
        assert.is((await send(alone.url, 'POST', `${BASE}/tags`, { body: tag('Zürich') })).status, 201);
        zyrich = (await send(alone.url, 'POST', `${BASE}/tags`, { body: tag('Zyrich') })).body.id;
        assert.ok(tokyo && zyrich);
      } finally {
        await alone.stop();
      }
      const check = await runCli(['pmacontrol-check'], { DATA_DIR: dataDir });
      assert.is(check.code, 1, check.stdout + check.stderr);
      assert.match(check.stdout, `tags ${tokyo} name: PmaControl stores tag.name in latin1, which has no "東"`);
      assert.match(check.stdout, new RegExp(`tags ${zyrich} name: the same name as tags \\d+ for PmaControl`));
      const env = { DATA_DIR: dataDir, PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
      const service = await spawnService(env);
      try {
        const held = await settled(service, (s) => typeof s.blocked === 'string');
        assert.match(held.blocked, `tags ${tokyo} name: PmaControl stores tag.name in latin1`);
        const ready = await send(service.url, 'GET', '/readyz');
        assert.equal([ready.status, ready.body.reason.includes('cannot take the next batch')], [503, true]);
        assert.not.match(ready.body.reason, '東', 'no value of the inventory on a route open to anyone');
        assert.equal(await tableRows(connection, 'SELECT position FROM pmacontrol_config_projection'), [
          { position: 0 },
        ]);
        for (const [id, name] of [
          [tokyo, 'tokyo-dc'],
          [zyrich, 'zyrich-2'],
        ]) {
          const fixed = await send(service.url, 'PATCH', `${BASE}/tags/${id}`, { body: { name } });
          assert.is(fixed.status, 200, fixed.text);
        }
        await settled(service, (s) => s.blocked === null && s.lag === 0);
        assert.is((await send(service.url, 'GET', '/readyz')).status, 200);
        const names = (await tableRows(connection, 'SELECT name FROM tag ORDER BY id')).map((r) => r.name);
        assert.equal(names, ['tokyo-dc', 'Zürich', 'zyrich-2']);
      } finally {
        await service.stop();
      }
      assert.is((await runCli(['pmacontrol-check'], { DATA_DIR: dataDir })).code, 0);
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  it('adopt refuses what the API refuses, and lists every problem', async () => {
    const { db, connection, cryptConfig } = await pmacontrol();
    try {
      await connection.query('INSERT INTO tag VALUES (-5, ?, ?, ?), (2147483647, ?, ?, ?)', [
        'negative',
        '#FFFFFF',
        '#000000',
        'last',
        '#FFFFFF',
        '#000000',
      ]);
      await connection.query("INSERT INTO client (id, libelle) VALUES (7, 'Client 7')");
      const env = { DATA_DIR: tempDir(), PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
      const service = await spawnService(env);
      try {
        await settled(service, (s) => typeof s.blocked === 'string');
        const issued = await runCli(['token', 'create', '--name', 'admin', '--role', 'admin'], env);
        // Issued while the service runs: known once it has followed the log.
        const headers = await tokenKnown([service.url], issued.stdout.trim().split('\n').pop()!);
        const head = (await projectionStatus(service)).log_position;
        const adopted = await send(service.url, 'POST', '/fr/api/pmacontrol/drift/adopt', {
          body: { all: true },
          headers,
        });
        assert.is(adopted.status, 422, adopted.text);
        const fields = adopted.body.errors.map((e: { field: string }) => e.field).sort();
        assert.equal(fields, ['tag/-5.id', 'tag/2147483647.id'], adopted.text);
        assert.match(adopted.text, "PmaControl's ids end at 2147483647");
        assert.is((await projectionStatus(service)).log_position, head, 'nothing adopted');
      } finally {
        await service.stop();
      }
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  it("servers' SSH keys are link__mysql_server__ssh_key rows: added, kept, removed with the key", async () => {
    const { db, connection, cryptConfig } = await pmacontrol();
    const env = { DATA_DIR: tempDir(), PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
    const service = await spawnService(env);
    try {
      const key = makeKey('ed25519', 2048, 'k@pmacontrol');
      const body = { name: 'k', user: 'root', public_key: key.publicKey, private_key: key.privateKey };
      const sshKey = (await send(service.url, 'POST', `${BASE}/ssh-keys`, { body })).body.id;
      const made = await send(service.url, 'POST', `${BASE}/servers`, { body: server('db1', { ssh_keys: [sshKey] }) });
      assert.equal([made.status, made.body.item.ssh_keys], [201, [sshKey]], made.text);
      await settled(service, (s) => s.lag === 0 && s.position !== 0);
      const links = await tableRows(connection, 'SELECT * FROM link__mysql_server__ssh_key');
      assert.equal(
        links.map(({ id_mysql_server, id_ssh_key, active }) => [id_mysql_server, id_ssh_key, active]),
        [[made.body.id, sshKey, 1]],
      );
      assert.match(String(links[0]!.added_on), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const renamed = await send(service.url, 'PATCH', `${BASE}/servers/${made.body.id}`, { body: { login: 'x' } });
      assert.is(renamed.status, 200);
      await settled(service, (s) => s.lag === 0);
      assert.equal(await tableRows(connection, 'SELECT id, added_on FROM link__mysql_server__ssh_key'), [
        { id: links[0]!.id, added_on: links[0]!.added_on },
      ]);
      assert.is((await send(service.url, 'DELETE', `${BASE}/ssh-keys/${sshKey}`)).status, 200);
      assert.equal((await send(service.url, 'GET', `${BASE}/servers/${made.body.id}`)).body.item.ssh_keys, []);
      await settled(service, (s) => s.lag === 0);
      assert.equal(await tableRows(connection, 'SELECT * FROM link__mysql_server__ssh_key'), []);
    } finally {
      await service.stop();
      await connection.end();
      await db.drop();
    }
  });
}

it.run();
