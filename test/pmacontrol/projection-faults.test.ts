import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import {
  canRunPrivateMariadb,
  freshDatabase,
  mariadbUrl,
  PrivateMariadb,
  skipWithoutMariadb,
} from '../support/mariadb.js';
import { writeCryptConfig } from '../support/php.js';
import { equalWithin, withSchema } from '../support/pmacontrol-tables.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { tokenKnown } from '../support/receiver.js';

const url = await mariadbUrl();
const it = suite("PmaControl's tables under faults: kill -9, its database down, the instance that writes lost");

/** Writes from `writers` clients at once until stopped: new tags and servers, and PATCHes of them. */
function burst(service: ServiceProcess, writers = 4) {
  let running = true;
  let acknowledged = 0;
  let n = 0;
  const loops = Array.from({ length: writers }, async () => {
    while (running) {
      const i = n++;
      const reply = await send(service.url, 'POST', `${BASE}/servers`, {
        body: {
          id_client: 99,
          id_environment: 1 + (i % 6),
          name: `burst-${i}`,
          ip: `10.9.${(i >> 8) & 255}.${i & 255}`,
          login: 'monitor',
          passwd: `pw-${i}`,
        },
      }).catch(() => undefined);
      if (reply?.status !== 201) continue;
      acknowledged++;
      await send(service.url, 'PATCH', `${BASE}/servers/${reply.body.id}`, {
        body: { passwd: `pw-${i}-changed` },
      }).catch(() => undefined);
    }
  });
  return {
    get acknowledged() {
      return acknowledged;
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const until = async (check: () => Promise<boolean> | boolean, what: string, ms = 20_000) => {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) assert.unreachable(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The platform's token (reader, secrets), issued by the CLI; `urls`: services that must know it first. */
async function platform(env: Record<string, string>, urls: string[] = []): Promise<Record<string, string>> {
  const issued = await runCli(['token', 'create', '--name', 'platform', '--role', 'reader', '--secrets'], env);
  return tokenKnown(urls, issued.stdout.trim().split('\n').pop()!);
}

const status = async (service: ServiceProcess) => (await send(service.url, 'GET', '/fr/api/pmacontrol/status')).body;

async function rowCount(dbUrl: string): Promise<{ servers: number; links: number }> {
  const connection = await createConnection({ uri: dbUrl });
  const [[servers]] = (await connection.query('SELECT COUNT(*) AS n FROM mysql_server')) as any;
  const [[links]] = (await connection.query('SELECT COUNT(*) AS n FROM link__mysql_server__tag')) as any;
  await connection.end();
  return { servers: Number(servers.n), links: Number(links.n) };
}

if (!url) skipWithoutMariadb('PmaControl projection faults');
else {
  it('kill -9 mid-burst, then a restart: the rows equal the API, nothing doubled or missed', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const cryptConfig = writeCryptConfig(tempDir());
    const env = { DATA_DIR: tempDir(), PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
    const first = await spawnService(env);
    const load = burst(first);
    await until(() => load.acknowledged >= 150, 'writes before the kill');
    await first.kill9();
    await load.stop();
    const second = await spawnService(env);
    try {
      const auth = await platform(env, [second.url]);
      await equalWithin(15_000, db.url, second.url, cryptConfig, auth);
      const servers = (await send(second.url, 'GET', `${BASE}/servers`, { headers: auth })).body.items.length;
      assert.ok(servers >= 150);
      assert.equal(await rowCount(db.url), { servers, links: 0 });
      // The secret reads of the comparison are events too: the position passes them within moments.
      await until(async () => (await status(second)).lag === 0, 'the position at the head of the log', 5000);
    } finally {
      await second.stop();
      await db.drop();
    }
  });

  it('two instances: one writes the tables; killed, the other takes over and catches up', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const cryptConfig = writeCryptConfig(tempDir());
    const env = {
      DATA_DIR: tempDir(),
      POLL_INTERVAL_MS: '50',
      PMACONTROL_DB_URL: db.url,
      PMACONTROL_CRYPT_KEY_FILE: cryptConfig,
      PMACONTROL_LEASE_MS: '2000',
    };
    const a = await spawnService(env);
    const b = await spawnService(env);
    try {
      await until(async () => (await status(a)).applying !== (await status(b)).applying, 'one instance applies');
      const [holder, other] = (await status(a)).applying ? [a, b] : [b, a];
      const load = burst(other, 2);
      await until(() => load.acknowledged >= 40, 'writes through the other instance');
      await holder.kill9();
      await until(async () => (await status(other)).applying, 'the other takes over', 10_000);
      await until(() => load.acknowledged >= 80, 'writes after the takeover');
      await load.stop();
      const auth = await platform(env, [other.url]);
      await equalWithin(15_000, db.url, other.url, cryptConfig, auth);
    } finally {
      await a.stop();
      await b.stop();
      await db.drop();
    }
  });

  (canRunPrivateMariadb() ? it : it.skip)(
    "PmaControl's database down while writes go on, then back: caught up, nothing refused",
    async () => {
      const pmacontrol = await PrivateMariadb.create();
      try {
        await withSchema(pmacontrol.url);
        const cryptConfig = writeCryptConfig(tempDir());
        const env = { DATA_DIR: tempDir(), PMACONTROL_DB_URL: pmacontrol.url, PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
        const service = await spawnService(env);
        try {
          const auth = await platform(env, [service.url]);
          const load = burst(service, 2);
          await until(() => load.acknowledged >= 30, 'writes before the outage');
          await pmacontrol.stop('SIGKILL');
          const before = load.acknowledged;
          await until(() => load.acknowledged >= before + 60, 'writes while it is down');
          await until(async () => (await status(service)).last_error !== null, 'the outage seen');
          assert.ok((await status(service)).lag > 0);
          await pmacontrol.start();
          await until(() => load.acknowledged >= before + 90, 'writes after it is back');
          await load.stop();
          await equalWithin(15_000, pmacontrol.url, service.url, cryptConfig, auth);
          const output = service.output();
          assert.match(output, "PmaControl's database cannot be written");
          assert.match(output, "PmaControl's database is back");
        } finally {
          await service.stop();
        }
      } finally {
        await pmacontrol.close();
      }
    },
  );

  it.run();
}
