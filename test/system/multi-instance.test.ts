import { randomBytes } from 'node:crypto';
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCE_NAMES as RESOURCES } from '../../src/domain/resources.js';
import { newLogKey } from '../../src/log/key.js';
import { BASE, type Reply, send } from '../support/harness.js';
import { makeKey } from '../support/keys.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { type ServiceProcess, spawnService, tempDir } from '../support/process.js';

type Instances = { a: ServiceProcess; b: ServiceProcess; done?: () => Promise<void> };
const ROUNDS = 8;
const statuses = (replies: Reply[]) => replies.map((r) => r.status).sort();

/** Writes on `url` in four loops until `stop()`: its writer always has a batch in hand. */
function keepBusy(url: string) {
  let running = true;
  const loops = Array.from({ length: 4 }, async (_, loop) => {
    const made = await send(url, 'POST', `${BASE}/clients`, { body: { libelle: `busy-${loop}-${Date.now()}` } });
    for (let i = 0; running; i++)
      await send(url, 'PATCH', `${BASE}/clients/${made.body.id}`, { body: { logo: `l${i}.png` } });
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const CASES: [string, (ctx: Instances) => Promise<void>][] = [
  [
    'what the other instance has just acknowledged is never refused here, idle or busy: no wrong 404, 422 or 409',
    async ({ a, b }: Instances) => {
      const wrong: string[] = [];
      const round = async (i: number) => {
        const tag = await send(a.url, 'POST', `${BASE}/tags`, {
          body: { name: `fresh-${i}`, color: '#000000', background: '#FFFFFF' },
        });
        const id = tag.body.id;
        const server = {
          id_client: 99,
          id_environment: 1,
          name: `fresh-${i}`,
          ip: `10.8.0.${i}`,
          login: 'l',
          passwd: 'p',
        };
        const replies = [
          await send(b.url, 'GET', `${BASE}/tags/${id}`),
          await send(b.url, 'PATCH', `${BASE}/tags/${id}`, { body: { color: '#111111' } }),
          await send(b.url, 'POST', `${BASE}/servers`, { body: { ...server, tags: [id] } }),
        ];
        for (const reply of replies) if (reply.status >= 400) wrong.push(`${reply.status} ${reply.text}`);
      };
      for (let i = 0; i < 15; i++) await round(i);
      const busy = keepBusy(b.url);
      for (let i = 15; i < 30; i++) await round(i);
      await busy.stop();
      assert.equal(wrong, []);
    },
  ],

  [
    'readyz stays ready on both while one of them writes steadily',
    async ({ a, b }: Instances) => {
      const busy = keepBusy(a.url);
      const notReady: string[] = [];
      for (let i = 0; i < 40; i++) {
        for (const url of [a.url, b.url]) {
          const ready = await send(url, 'GET', '/readyz');
          if (ready.status !== 200) notReady.push(ready.text);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await busy.stop();
      assert.equal(notReady, []);
    },
  ],

  [
    'the same tag name posted to both: one 201, one 409',
    async ({ a, b }: Instances) => {
      for (let i = 0; i < ROUNDS; i++) {
        const body = { name: `race-${i}`, color: '#000000', background: '#FFFFFF' };
        const replies = await Promise.all([
          send(a.url, 'POST', `${BASE}/tags`, { body }),
          send(b.url, 'POST', `${BASE}/tags`, { body: { ...body, name: body.name.toUpperCase() } }),
        ]);
        assert.equal(statuses(replies), [201, 409], replies.map((r) => r.text).join('\n'));
      }
    },
  ],

  [
    'the same server ip:port posted to both: one 201, one 409',
    async ({ a, b }: Instances) => {
      for (let i = 0; i < ROUNDS; i++) {
        const body = (name: string) => ({
          id_client: 99,
          id_environment: 1,
          name,
          ip: `10.1.0.${i}`,
          port: 3306,
          login: 'pma',
          passwd: 'pw',
        });
        const replies = await Promise.all([
          send(a.url, 'POST', `${BASE}/servers`, { body: body(`a-${i}`) }),
          send(b.url, 'POST', `${BASE}/servers`, { body: body(`b-${i}`) }),
        ]);
        assert.equal(statuses(replies), [201, 409]);
      }
    },
  ],

  [
    'deleting an SSH key while a storage area referencing it is created: never both',
    async ({ a, b }: Instances) => {
      for (let i = 0; i < ROUNDS; i++) {
        const key = makeKey('ed25519');
        const made = await send(a.url, 'POST', `${BASE}/ssh-keys`, {
          body: { name: `k${i}`, user: `u${i}`, public_key: key.publicKey, private_key: key.privateKey },
        });
        const id = made.body.id;
        const [deleted, area] = await Promise.all([
          send(a.url, 'DELETE', `${BASE}/ssh-keys/${id}`),
          send(b.url, 'POST', `${BASE}/storage-areas`, {
            body: { id_ssh_key: id, ip: '10.2.0.1', path: `/b${i}`, libelle: `area ${i}` },
          }),
        ]);
        const outcome = `${deleted.status}/${area.status}`;
        assert.ok(outcome === '200/422' || outcome === '409/201' || outcome === '200/404', outcome);
        if (deleted.status === 409)
          assert.equal(deleted.body.dependents, [{ resource: 'storage-areas', id: area.body.id }]);
      }
    },
  ],

  [
    'racing PATCHes with the same If-Match: one 200, one 412',
    async ({ a, b }: Instances) => {
      const made = await send(a.url, 'POST', `${BASE}/clients`, { body: { libelle: 'contended' } });
      const path = `${BASE}/clients/${made.body.id}`;
      for (let i = 0; i < ROUNDS; i++) {
        const version = (await send(a.url, 'GET', path)).body.item.version;
        const headers = { 'If-Match': `"${version}"` };
        const replies = await Promise.all([
          send(a.url, 'PATCH', path, { body: { logo: `a${i}.png` }, headers }),
          send(b.url, 'PATCH', path, { body: { logo: `b${i}.png` }, headers }),
        ]);
        assert.equal(statuses(replies), [200, 412]);
      }
    },
  ],

  [
    'ids are never reused: concurrent creations on both get distinct, increasing ids',
    async ({ a, b }: Instances) => {
      const posts = Array.from({ length: 20 }, (_, i) =>
        send(i % 2 ? a.url : b.url, 'POST', `${BASE}/environments`, {
          body: { libelle: `env${i}`, key: `e${i}`, class: 'info', letter: 'E' },
        }),
      );
      const ids = (await Promise.all(posts)).map((r) => r.body.id as number);
      assert.is(new Set(ids).size, 20);
      assert.ok(ids.every((id) => id > 6));
    },
  ],

  [
    'a write answers only once the instance that took it has applied it (read-your-writes)',
    async ({ a, b }: Instances) => {
      for (const [writer, url] of [
        ['a', a.url],
        ['b', b.url],
      ]) {
        const made = await send(url, 'POST', `${BASE}/tags`, {
          body: { name: `ryw-${writer}`, color: '#000000', background: '#FFFFFF' },
        });
        const read = await send(url, 'GET', `${BASE}/tags/${made.body.id}`);
        assert.is(read.status, 200);
      }
    },
  ],

  [
    'both instances converge on the same state',
    async ({ a, b }: Instances) => {
      const snapshot = async (url: string) =>
        JSON.stringify(await Promise.all(RESOURCES.map(async (r) => (await send(url, 'GET', `${BASE}/${r}`)).body)));
      let same = false;
      for (let i = 0; i < 100 && !same; i++) {
        same = (await snapshot(a.url)) === (await snapshot(b.url));
        if (!same) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(same, 'the two instances still differ after 5 s');
    },
  ],
];

function cases(it: Test<Instances>) {
  for (const [title, run] of CASES) it(title, run);
}

const it = suite<Instances>('two service processes over one SQLite store');

it.before(async (ctx) => {
  const dataDir = tempDir();
  // Started one after the other: both must agree on the generated secret key and the genesis.
  ctx.a = await spawnService({ DATA_DIR: dataDir, POLL_INTERVAL_MS: '50' });
  ctx.b = await spawnService({ DATA_DIR: dataDir, POLL_INTERVAL_MS: '50' });
});
it.after(async ({ a, b }) => {
  await Promise.all([a.stop(), b.stop()]);
});
cases(it);
it.run();

const url = await mariadbUrl();
if (url) {
  const on = suite<Instances>('two service processes over one MariaDB database, each with its own DATA_DIR');
  on.before(async (ctx) => {
    const database = await freshDatabase(url);
    const env = {
      EVENT_STORE: 'mariadb',
      MARIADB_URL: database.url,
      CONFIG_SECRET_KEY: randomBytes(32).toString('hex'),
      CONFIG_LOG_SIGNING_KEY: newLogKey(),
    };
    ctx.a = await spawnService({ ...env, DATA_DIR: tempDir() });
    ctx.b = await spawnService({ ...env, DATA_DIR: tempDir() });
    ctx.done = database.drop;
  });
  on.after(async ({ a, b, done }) => {
    await Promise.all([a.stop(), b.stop()]);
    await done?.();
  });
  cases(on);
  on.run();
} else skipWithoutMariadb('two service processes over one MariaDB database');
