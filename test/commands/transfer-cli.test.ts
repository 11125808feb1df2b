import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE } from '../support/harness.js';
import { runCli, servedDataDir, spawnService, tempDir } from '../support/process.js';

const it = suite('pmacontrol-config export and import: files, progress on stderr, all or nothing');

const json = (url: string, path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { 'Content-Type': 'application/json' } }).then((r) => r.json());

it('export to a file, import it into another data directory with the same key: the same inventory', async () => {
  const key = randomBytes(32).toString('hex');
  const [source, target] = [tempDir(), await servedDataDir({ CONFIG_SECRET_KEY: key })];
  const service = await spawnService({ DATA_DIR: source, CONFIG_SECRET_KEY: key });
  try {
    const post = (resource: string, body: object) =>
      json(service.url, `${BASE}/${resource}`, { method: 'POST', body: JSON.stringify(body) });
    const tag = await post('tags', { name: 'prod', color: '#FF0000', background: '#000000' });
    await post('servers', {
      id_client: 99,
      id_environment: 1,
      name: 'db1',
      ip: '10.0.0.1',
      login: 'pma',
      passwd: 'pw',
      tags: [tag.id],
    });
  } finally {
    await service.stop();
  }
  const file = join(tempDir(), 'inventory.json');
  const exported = await runCli(['export', '--secrets', 'sealed', '--out', file], {
    DATA_DIR: source,
    CONFIG_SECRET_KEY: key,
  });
  assert.is(exported.code, 0, exported.stderr);
  assert.match(exported.stderr, /export: \d+\/\d+ \(100%\)/);
  assert.is(statSync(file).mode & 0o777, 0o600, 'an export is readable by its owner only');
  const document = JSON.parse(readFileSync(file, 'utf8'));
  assert.is(document.resources.servers[0].name, 'db1');

  const env = { DATA_DIR: target, CONFIG_SECRET_KEY: key };
  const dry = await runCli(['import', file, '--dry-run'], env);
  assert.equal([dry.code, dry.stdout.trim()], [0, '2 created, 0 updated, 7 unchanged (would be recorded)'], dry.stderr);
  const done = await runCli(['import', file], env);
  assert.equal([done.code, done.stdout.trim()], [0, '2 created, 0 updated, 7 unchanged (were recorded)'], done.stderr);

  const copy = await spawnService(env);
  try {
    const servers = await json(copy.url, `${BASE}/servers`);
    assert.equal([servers.items[0].name, servers.items[0].tags, servers.items[0].has_passwd], ['db1', [1], true]);
    const changes = await json(copy.url, '/fr/api/changes?type=ServerCreated');
    assert.match(changes.items[0].actor, /^cli:/, 'the import is recorded under the user who ran it');
  } finally {
    await copy.stop();
  }
});

it('a document with problems: exit 1, every problem on stderr, nothing recorded', async () => {
  const target = await servedDataDir();
  const file = join(tempDir(), 'bad.json');
  const server = { id_client: 404, id_environment: 1, login: 'pma', passwd: 'pw' };
  writeFileSync(
    file,
    JSON.stringify({
      format: 'pmacontrol-config/1',
      resources: {
        servers: [
          { ...server, id: 5, name: 'a', ip: '10.0.0.1' },
          { ...server, id: 6, name: 'b', ip: '999.1.1.1' },
        ],
      },
    }),
  );
  const run = await runCli(['import', file], { DATA_DIR: target });
  assert.is(run.code, 1);
  assert.match(run.stderr, 'resources.servers[1].ip');
  assert.match(run.stderr, 'resources.servers[0].id_client', 'problems found deciding are listed with the others');
  const second = await runCli(['import', file], { DATA_DIR: target });
  assert.match(second.stderr, 'resources.servers[1].ip', 'the same problems again: nothing was half-imported');
  const notJson = await runCli(['import', join(tempDir(), 'missing.json')], { DATA_DIR: target });
  assert.is.not(notJson.code, 0);
});

it.run();
