import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';

/**
 * Find (section 13), through the real process: by any name an entry holds or held, folded as
 * MariaDB compares, ranked; a renamed or deleted entry by its old name, also after a restart.
 */

const server = (n: number, name: string) => ({
  id_client: 99,
  id_environment: 1,
  name,
  ip: `10.77.0.${n}`,
  hostname: `host-${n}.paris.example.net`,
  login: 'dba',
  passwd: 'x',
});

async function find(url: string, q: string) {
  const reply = await send(url, 'GET', `/fr/api/search?q=${encodeURIComponent(q)}`);
  assert.is(reply.status, 200, reply.text);
  return reply.body as {
    items: {
      resource: string;
      id: number;
      label: string;
      deleted: boolean;
      matched: { field: string; value: string; current: boolean };
    }[];
    past_read: boolean;
  };
}

async function untilPastRead(url: string): Promise<void> {
  for (let i = 0; i < 200 && !(await find(url, 'x')).past_read; i++) await new Promise((r) => setTimeout(r, 50));
}

/** The renamed server by its old name, the deleted tag by its name. */
async function oldNames(url: string, renamedId: number): Promise<void> {
  const renamed = (await find(url, 'db-paris-02')).items.find((i) => i.id === renamedId);
  assert.equal([renamed?.label, renamed?.matched.current], ['db-lyon-01', false], 'found by its old name');
  const deleted = (await find(url, 'galera')).items[0];
  assert.equal([deleted?.resource, deleted?.deleted, deleted?.label], ['tags', true, 'galera-cluster']);
}

/** Four servers, ranked when searched; their ids. */
async function ranked(url: string): Promise<number[]> {
  const ids: number[] = [];
  const names = ['db-paris-02', 'db-paris-021', 'Zürich-db', 'old-db-paris-02-x'];
  for (const [i, name] of names.entries())
    ids.push((await send(url, 'POST', `${BASE}/servers`, { body: server(i + 1, name) })).body.id);
  const found = await find(url, 'db-paris-02');
  assert.equal(found.items.map((i) => i.id).slice(0, 3), [ids[0], ids[1], ids[3]], 'exact, then prefix, then inside');
  assert.equal(
    (await find(url, 'zurich')).items.map((i) => i.label),
    ['Zürich-db'],
  );
  assert.equal((await find(url, '10.77.0.3')).items[0].matched, { field: 'ip', value: '10.77.0.3', current: true });
  return ids;
}

test('by name, ip, accents folded, ranked; renamed and deleted entries by their old names, also after a restart', async () => {
  const dataDir = tempDir();
  let service = await spawnService({ DATA_DIR: dataDir });
  try {
    const ids = await ranked(service.url);
    await send(service.url, 'PATCH', `${BASE}/servers/${ids[0]}`, {
      body: { name: 'db-lyon-01', display_name: 'db-lyon-01' },
    });
    const body = { name: 'galera-cluster', color: '#000000', background: '#FFFFFF' };
    const tag = await send(service.url, 'POST', `${BASE}/tags`, { body });
    await send(service.url, 'DELETE', `${BASE}/tags/${tag.body.id}`);
    await oldNames(service.url, ids[0]);
    await service.stop();
    service = await spawnService({ DATA_DIR: dataDir });
    await untilPastRead(service.url);
    await oldNames(service.url, ids[0]);
    assert.is((await send(service.url, 'GET', '/fr/api/search?q=')).status, 400);
  } finally {
    await service.stop();
  }
});

test.run();
