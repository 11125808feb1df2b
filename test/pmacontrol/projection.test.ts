import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPmaControlCrypt, readPmaControlCryptKey } from '../../src/pmacontrol/crypt.js';
import { BASE, send } from '../support/harness.js';
import { makeKey } from '../support/keys.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { phpAvailable, pmacontrolDecrypt, writeCryptConfig } from '../support/php.js';
import { differences, equalWithin, withSchema } from '../support/pmacontrol-tables.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { tokenKnown } from '../support/receiver.js';

const url = await mariadbUrl();
const php = phpAvailable();

const it = suite("PMACONTROL_DB_URL: PmaControl's tables kept equal to the configuration");

async function projected() {
  const db = await freshDatabase(url!);
  await withSchema(db.url);
  const cryptConfig = writeCryptConfig(tempDir());
  const env = { DATA_DIR: tempDir(), PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
  return { db, cryptConfig, env };
}

/** A token issued by the CLI, as the Authorization header. */
async function token(env: Record<string, string>, name: string, role: string, secrets = false, urls: string[] = []) {
  const args = ['token', 'create', '--name', name, '--role', role, ...(secrets ? ['--secrets'] : [])];
  const issued = await runCli(args, env);
  assert.is(issued.code, 0, issued.stderr);
  // Issued while services run: known once they have followed the log.
  return tokenKnown(urls, issued.stdout.trim().split('\n').pop()!);
}

/** A token that may read secrets, to compare the passwords in the rows with the service's. */
const platform = (env: Record<string, string>, urls: string[] = []) => token(env, 'platform', 'reader', true, urls);

const post = async (service: ServiceProcess, resource: string, body: Record<string, unknown>) => {
  const reply = await send(service.url, 'POST', `${BASE}/${resource}`, { body });
  assert.is(reply.status, 201, reply.text);
  return reply.body.id as number;
};
const write = async (service: ServiceProcess, method: string, path: string, body?: Record<string, unknown>) => {
  const reply = await send(service.url, method, `${BASE}/${path}`, body ? { body } : {});
  assert.ok(reply.status < 300, reply.text);
};

if (!url) skipWithoutMariadb('PmaControl projection');
else {
  /** A change of every kind through the API, each checked in the rows; the ids made. */
  async function everyKind(service: ServiceProcess, check: () => Promise<number>) {
    await check(); // the environments 1–6 and client 99 the service starts with
    const tag = await post(service, 'tags', { name: 'galera', color: '#FFFFFF', background: '#000000' });
    const other = await post(service, 'tags', { name: 'paris', color: '#FFFFFF', background: '#000000' });
    const client = await post(service, 'clients', { libelle: 'ACME' });
    const env7 = await post(service, 'environments', { libelle: 'Staging', key: 'stg', class: 'info', letter: 'S' });
    const server = await post(service, 'servers', {
      id_client: client,
      id_environment: env7,
      name: 'db1',
      ip: '10.0.0.1',
      login: 'monitor',
      passwd: 'First-Pässword',
      tags: [tag, other],
      is_ssl: true,
    });
    await check();
    await write(service, 'PATCH', `servers/${server}`, { passwd: 'Second-Password', ssh_login: 'admin' });
    await check();
    const alias = await post(service, 'aliases', { id_mysql_server: server, dns: 'db1.example.net', port: 3306 });
    const key = makeKey('ed25519', 2048, 'backup@pmacontrol');
    const sshKey = await post(service, 'ssh-keys', {
      name: 'backup',
      user: 'root',
      public_key: key.publicKey,
      private_key: key.privateKey,
    });
    await post(service, 'storage-areas', {
      id_ssh_key: sshKey,
      ip: '10.1.1.1',
      port: 22,
      path: '/srv',
      libelle: 'main',
    });
    await check();
    await write(service, 'DELETE', `tags/${other}`); // the link row goes with it
    await write(service, 'DELETE', `aliases/${alias}`);
    await write(service, 'DELETE', `servers/${server}`); // soft: is_deleted = 1
    await check();
    return { server, tag, key };
  }

  (php ? it : it.skip)('every kind of change shows in the rows within a second; PHP opens the passwords', async () => {
    const { db, cryptConfig, env } = await projected();
    const service = await spawnService(env);
    const auth = await platform(env, [service.url]);
    const check = () => equalWithin(1000, db.url, service.url, cryptConfig, auth);
    try {
      const { server, tag, key } = await everyKind(service, check);
      const connection = await createConnection({ uri: db.url });
      const [[row]] = (await connection.query('SELECT * FROM mysql_server WHERE id = ?', [server])) as any;
      const [links] = (await connection.query('SELECT id_tag FROM link__mysql_server__tag')) as any;
      const [[keyRow]] = (await connection.query('SELECT * FROM ssh_key')) as any;
      await connection.end();
      assert.equal([row.is_password_crypted, row.is_deleted, row.is_ssl, row.ssh_login], [1, 1, 1, 'admin']);
      assert.equal(links, [{ id_tag: tag }]);
      const opened = pmacontrolDecrypt(cryptConfig, [row.passwd, keyRow.private_key, keyRow.public_key]);
      assert.equal(
        opened.map((value) => value.trim()),
        ['Second-Password', key.privateKey.trim(), key.publicKey],
      );
      await write(service, 'PATCH', `servers/${server}`, { is_deleted: false });
      await check();
    } finally {
      await service.stop();
      await db.drop();
    }
  });

  it('writes go on while no PmaControl database answers; the status and a log line say so', async () => {
    const { db, cryptConfig, env } = await projected();
    const broken = { ...env, PMACONTROL_DB_URL: 'mysql://root:hunter2@127.0.0.1:1/nowhere' };
    const service = await spawnService(broken);
    try {
      await post(service, 'tags', { name: 'still-written', color: '#FFFFFF', background: '#000000' });
      let status = (await send(service.url, 'GET', '/fr/api/pmacontrol/status')).body;
      for (let i = 0; i < 100 && status.last_error === null; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await send(service.url, 'GET', '/fr/api/pmacontrol/status')).body;
      }
      assert.equal([status.enabled, status.applying], [true, false]);
      assert.ok(status.lag > 0);
      assert.match(status.last_error, /ECONNREFUSED|connect/);
      assert.match(service.output(), "PmaControl's database cannot be written");
      assert.not.match(service.output(), 'hunter2', 'the URL password is never logged');
      assert.is(service.output().split("PmaControl's database cannot be written").length, 2, 'said once');
      assert.not.ok(JSON.stringify(status).includes('hunter2'));
    } finally {
      await service.stop();
    }
    // The same data directory, now with the database: everything is caught up.
    const back = await spawnService(env);
    try {
      const auth = await platform(env, [back.url]);
      await equalWithin(5000, db.url, back.url, cryptConfig, auth);
      // Comparing reads the passwords, which appends a secret-read event: the lag is 1 until the
      // instance passes it (a few milliseconds), though no row changes.
      let status = (await send(back.url, 'GET', '/fr/api/pmacontrol/status')).body;
      for (let i = 0; i < 100 && status.lag !== 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await send(back.url, 'GET', '/fr/api/pmacontrol/status')).body;
      }
      assert.equal([status.applying, status.lag], [true, 0]);
      assert.is(await differences(db.url, back.url, cryptConfig, auth), undefined);
    } finally {
      await back.stop();
      await db.drop();
    }
  });

  /** Rows changed by PmaControl itself: a column, a password, a new row, a row deleted. */
  async function pmacontrolEdits(dbUrl: string, cryptConfig: string, server: number, alias: number) {
    const crypt = createPmaControlCrypt(readPmaControlCryptKey(cryptConfig));
    const connection = await createConnection({ uri: dbUrl });
    await connection.query("UPDATE mysql_server SET login = 'edited', display_name = 'Edited' WHERE id = ?", [server]);
    await connection.query('UPDATE mysql_server SET passwd = ? WHERE id = ?', [
      crypt.encrypt('Set-In-PmaControl'),
      server,
    ]);
    await connection.query(
      "INSERT INTO tag (id, name, color, background) VALUES (50, 'from-pmacontrol', '#FFFFFF', '#123456')",
    );
    await connection.query('DELETE FROM alias_dns WHERE id = ?', [alias]);
    await connection.end();
  }

  /** Adopts the login, the password and PmaControl's new tag; overwrites the rest; then no drift. */
  async function adoptThenOverwrite(
    service: ServiceProcess,
    admin: Record<string, string>,
    server: number,
    alias: number,
  ) {
    const pick = (column: string | null, table = 'mysql_server', id = server) => ({ table, id, column });
    const writer = await send(service.url, 'POST', '/fr/api/pmacontrol/drift/adopt', { body: { all: true } });
    assert.is(writer.status, 403, 'anonymous is a writer here: adopting needs admin');
    const adopted = await send(service.url, 'POST', '/fr/api/pmacontrol/drift/adopt', {
      body: { items: [pick('login'), pick('passwd'), pick(null, 'tag', 50)] },
      headers: admin,
    });
    assert.equal([adopted.status, adopted.body], [200, { adopted: 3, events: 2 }], adopted.text);
    const changes = (await send(service.url, 'GET', '/fr/api/changes?actor=pmacontrol', { headers: admin })).body;
    assert.equal(
      changes.items.map((c: { type: string }) => c.type),
      ['TagCreated', 'ServerUpdated'],
    );
    const secret = await send(service.url, 'GET', `${BASE}/servers/${server}/secret`, { headers: admin });
    assert.is(secret.body.passwd, 'Set-In-PmaControl');
    assert.is((await send(service.url, 'GET', `${BASE}/tags/50`)).body.item.name, 'from-pmacontrol');

    // Only the chosen columns were adopted, and only they are written back: PmaControl's display_name,
    // not chosen, stays as it is, still a difference to decide on.
    const rest = [
      { table: 'alias_dns', id: alias, column: null, service: 'row', pmacontrol: null },
      { table: 'mysql_server', id: server, column: 'display_name', service: 'db1', pmacontrol: 'Edited' },
    ];
    let left = [];
    for (let i = 0; i < 40 && JSON.stringify(left) !== JSON.stringify(rest); i++) {
      await new Promise((r) => setTimeout(r, 50));
      left = (await send(service.url, 'GET', '/fr/api/pmacontrol/drift')).body.items;
    }
    assert.equal(left, rest);
    const over = await send(service.url, 'POST', '/fr/api/pmacontrol/drift/overwrite', {
      body: { all: true },
      headers: admin,
    });
    assert.equal([over.status, over.body], [200, { overwritten: 2 }], over.text);
    assert.equal((await send(service.url, 'GET', '/fr/api/pmacontrol/drift')).body.items, []);
    const stale = await send(service.url, 'POST', '/fr/api/pmacontrol/drift/adopt', {
      body: { items: [pick('login')] },
      headers: admin,
    });
    assert.equal([stale.status, stale.body.code], [422, 'validation_failed']);
  }

  it('drift: rows changed by PmaControl listed, adopted as changes by pmacontrol, or overwritten', async () => {
    const { db, cryptConfig, env } = await projected();
    const service = await spawnService({ ...env, PMACONTROL_DRIFT_INTERVAL_MS: '200' });
    try {
      const admin = await token(env, 'admin', 'admin', true, [service.url]);
      const server = await post(service, 'servers', {
        id_client: 99,
        id_environment: 1,
        name: 'db1',
        ip: '10.0.0.1',
        login: 'monitor',
        passwd: 'Set-In-Service',
      });
      const alias = await post(service, 'aliases', { id_mysql_server: server, dns: 'db1.example.net', port: 3306 });
      const key = makeKey('ed25519', 2048, 'backup@pmacontrol');
      await post(service, 'ssh-keys', {
        name: 'k',
        user: 'root',
        public_key: key.publicKey,
        private_key: key.privateKey,
      });
      await equalWithin(1000, db.url, service.url, cryptConfig, admin);
      assert.equal(
        (await send(service.url, 'GET', '/fr/api/pmacontrol/drift')).body.items,
        [],
        'no drift: derived fields too',
      );
      await pmacontrolEdits(db.url, cryptConfig, server, alias);
      const found = (await send(service.url, 'GET', '/fr/api/pmacontrol/drift')).body.items;
      assert.equal(found, [
        { table: 'tag', id: 50, column: null, service: null, pmacontrol: 'row' },
        { table: 'alias_dns', id: alias, column: null, service: 'row', pmacontrol: null },
        { table: 'mysql_server', id: server, column: 'display_name', service: 'db1', pmacontrol: 'Edited' },
        { table: 'mysql_server', id: server, column: 'login', service: 'monitor', pmacontrol: 'edited' },
        { table: 'mysql_server', id: server, column: 'passwd', service: '[redacted]', pmacontrol: '[redacted]' },
      ]);
      assert.not.match(JSON.stringify(found), 'Set-In');
      let status = (await send(service.url, 'GET', '/fr/api/pmacontrol/status')).body;
      // A scheduled look may fall between two of PmaControl's edits: the next one finds all five.
      for (let i = 0; i < 200 && status.drift !== 5; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await send(service.url, 'GET', '/fr/api/pmacontrol/status')).body;
      }
      assert.is(status.drift, 5, 'the scheduled look found them');
      assert.match(service.output(), "pmacontrol drift: PmaControl's tables differ");

      await adoptThenOverwrite(service, admin, server, alias);
      await equalWithin(2000, db.url, service.url, cryptConfig, admin);
    } finally {
      await service.stop();
      await db.drop();
    }
  });

  it('PMACONTROL_DB_URL without PMACONTROL_CRYPT_KEY_FILE: the start is refused and says why', async () => {
    const { db, env } = await projected();
    const { PMACONTROL_CRYPT_KEY_FILE: _, ...without } = env;
    try {
      await spawnService(without).then(
        () => assert.unreachable('started'),
        (error: Error) => assert.match(error.message, 'PMACONTROL_DB_URL needs PMACONTROL_CRYPT_KEY_FILE'),
      );
    } finally {
      await db.drop();
    }
  });

  it.run();
}
