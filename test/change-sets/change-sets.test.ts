import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE } from '../support/harness.js';
import { type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { call, countIn, inventory, moves, openSet, stageMany } from './support.js';

/**
 * Change sets (section 17) through the real process: staged writes seen only with the header,
 * refused as the write would be, a diff with its conflicts, a merge a reader sees whole, its events
 * consecutive and named by the change set, a revert that brings the configuration back.
 */

let service: ServiceProcess;
let url: string;

test.before(async () => {
  service = await spawnService({ DATA_DIR: tempDir(), POLL_INTERVAL_MS: '50' });
  url = service.url;
});

test.after(async () => {
  await service.stop();
});

test('staged with the header: seen with it, not without; a duplicate refused as the write would be', async () => {
  const { servers, environment } = await inventory(url, 3);
  const id = await openSet(url, 'one move');
  const header = { 'Change-Set': String(id) };
  const staged = await call(url, 'PATCH', `${BASE}/servers/${servers[0]}`, { id_environment: environment }, header);
  assert.is(staged.status, 202, staged.text);
  assert.equal([staged.body.change_set, staged.body.item.id_environment], [id, environment]);
  assert.is((await call(url, 'GET', `${BASE}/servers/${servers[0]}`)).body.item.id_environment, 1, 'not applied');
  const seen = await call(url, 'GET', `${BASE}/servers/${servers[0]}`, undefined, header);
  assert.is(seen.body.item.id_environment, environment);
  const listed = await call(url, 'GET', `${BASE}/servers?id_environment=${environment}`, undefined, header);
  assert.equal(
    listed.body.items.map((s: { id: number }) => s.id),
    [servers[0]],
  );
  const head = (await call(url, 'GET', '/fr/api/changes?order=desc&limit=1')).body.items[0].position;
  const taken = (await call(url, 'GET', `${BASE}/servers/${servers[1]}`)).body.item.ip;
  const duplicate = { id_client: 99, id_environment: 1, name: 'dup', ip: taken, login: 'x', passwd: 'y' };
  const refused = await call(url, 'POST', `${BASE}/servers`, duplicate, header);
  assert.equal([refused.status, refused.body.code], [409, 'conflict'], refused.text);
  assert.is(
    (await call(url, 'GET', '/fr/api/changes?order=desc&limit=1')).body.items[0].position,
    head,
    'nothing appended',
  );
  assert.is((await call(url, 'GET', `/fr/api/change-sets/${id}`)).body.change_set.staged, 1);
  assert.is(
    (await call(url, 'GET', '/fr/api/export', undefined, header)).status,
    200,
    'export: the configuration itself',
  );
});

test('a staged password is in no diff, change or answer', async () => {
  const { servers } = await inventory(url, 1);
  const id = await openSet(url, 'password');
  const staged = await call(
    url,
    'PATCH',
    `${BASE}/servers/${servers[0]}`,
    { passwd: 'Staged-S3cret!' },
    { 'Change-Set': String(id) },
  );
  assert.is(staged.status, 202, staged.text);
  const diff = await call(url, 'GET', `/fr/api/change-sets/${id}/diff`);
  assert.equal(diff.body.fields.find((f: { field: string }) => f.field === 'passwd').change_set, '[redacted]');
  const changes = await call(url, 'GET', '/fr/api/changes?resource=change-set-operations&limit=1000');
  for (const text of [staged.text, diff.text, changes.text]) assert.not.ok(text.includes('Staged-S3cret!'));
  assert.is((await call(url, 'POST', `/fr/api/change-sets/${id}/close`)).body.change_set.state, 'closed');
});

/** Polls the moved servers' environment while `work` runs: every count a reader saw. */
async function watched(url: string, environment: number, work: () => Promise<unknown>): Promise<number[]> {
  const seen: number[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) seen.push(await countIn(url, environment));
  })();
  try {
    await work();
  } finally {
    polling = false;
    await poll;
  }
  return seen;
}

test('a conflict refuses the merge until resolved; a reader sees all or nothing; the events are consecutive', async () => {
  const { servers, environment } = await inventory(url, 30);
  const id = await openSet(url, 'move thirty');
  assert.is((await stageMany(url, id, moves(servers, environment))).status, 202);
  await call(url, 'PATCH', `${BASE}/servers/${servers[5]}`, { id_environment: 3 });
  const diff = await call(url, 'GET', `/fr/api/change-sets/${id}/diff`);
  const conflict = { resource: 'servers', id: servers[5], field: 'id_environment', base: 1, now: 3 };
  const conflicts = diff.body.fields.filter((f: { conflict: boolean }) => f.conflict);
  assert.equal(conflicts, [{ ...conflict, change_set: environment, conflict: true }]);
  const refused = await call(url, 'POST', `/fr/api/change-sets/${id}/merge`);
  assert.equal([refused.status, refused.body.conflicts.length], [409, 1], refused.text);
  const resolve = { [`servers/${servers[5]}/id_environment`]: 'change-set' };
  let merged: Awaited<ReturnType<typeof call>> | undefined;
  const seen = await watched(url, environment, async () => {
    merged = await call(url, 'POST', `/fr/api/change-sets/${id}/merge`, { resolve });
  });
  assert.is(merged?.status, 200, merged?.text);
  assert.ok(
    seen.every((n) => n === 0 || n === 30),
    `a reader saw ${[...new Set(seen)].join(', ')}`,
  );
  const events = (await call(url, 'GET', `/fr/api/changes?change_set=${id}&limit=1000`)).body.items;
  const positions = events.map((e: { position: number }) => e.position);
  assert.equal(
    positions,
    positions.map((_: number, i: number) => positions[0] + i),
    'consecutive',
  );
  assert.equal([events.length, events.at(-1).type], [31, 'ChangeSetMerged']);
  const again = await call(url, 'POST', `/fr/api/change-sets/${id}/merge`);
  assert.equal([again.status, again.body.code], [409, 'already_merged']);
});

test('a revert brings the configuration back to the moment before the merge', async () => {
  const { servers, environment } = await inventory(url, 10);
  const id = await openSet(url, 'and back');
  const tag = {
    method: 'POST',
    path: `${BASE}/tags`,
    body: { name: 'moved', color: '#000000', background: '#FFFFFF' },
  };
  assert.is((await stageMany(url, id, [...moves(servers, environment), tag])).status, 202);
  const before = (await call(url, 'GET', '/fr/api/changes?order=desc&limit=1')).body.items[0].position;
  assert.is((await call(url, 'POST', `/fr/api/change-sets/${id}/merge`)).status, 200);
  const reverted = await call(url, 'POST', `/fr/api/change-sets/${id}/revert`);
  assert.is(reverted.status, 200, reverted.text);
  assert.is(reverted.body.change_set.state, 'reverted');
  const diff = await call(url, 'GET', `/fr/api/diff?from=${before}`);
  const changed = Object.entries(
    diff.body.resources as Record<string, { created: unknown[]; updated: unknown[]; deleted: unknown[] }>,
  )
    .filter(([name]) => !name.startsWith('change-set'))
    .flatMap(([name, part]) => [...part.created, ...part.updated, ...part.deleted].map(() => name));
  assert.equal(changed, [], diff.text);
});

test.run();
