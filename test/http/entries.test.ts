import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const it = suite<{ h: Harness }>('entries: create, read, replace, patch, delete');
it.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

const tag = (name: string) => ({ name, color: '#ffffff', background: '#337AB7' });

it('POST creates with version 1, Location and ETag; GET reads it back', async ({ h }) => {
  const created = await h.request('POST', `${BASE}/tags`, { body: tag('galera') });
  assert.is(created.status, 201);
  assert.is(created.body.resource, 'tags');
  assert.is(created.headers.get('location'), `${BASE}/tags/${created.body.id}`);
  assert.is(created.headers.get('etag'), '"1"');
  assert.is(created.body.item.version, 1);
  assert.is(created.body.item.created_at, created.body.item.updated_at);
  assert.match(created.body.item.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const read = await h.request('GET', `${BASE}/tags/${created.body.id}`);
  assert.is(read.status, 200);
  assert.equal(read.body.item, created.body.item);
  assert.is(read.headers.get('etag'), '"1"');
});

it('ids are allocated increasing and never reused, not even after a hard delete', async ({ h }) => {
  const a = await h.request('POST', `${BASE}/tags`, { body: tag('a') });
  const b = await h.request('POST', `${BASE}/tags`, { body: tag('b') });
  assert.is(b.body.id, a.body.id + 1);
  await h.request('DELETE', `${BASE}/tags/${b.body.id}`);
  const c = await h.request('POST', `${BASE}/tags`, { body: tag('c') });
  assert.is(c.body.id, b.body.id + 1);
  const taken = await h.request('POST', `${BASE}/tags`, { body: { ...tag('d'), id: b.body.id } });
  assert.is(taken.status, 409);
  assert.is(taken.body.code, 'conflict');
  assert.equal(taken.body.conflict, { resource: 'tags', id: b.body.id, fields: ['id'] }, 'held, though deleted');
});

it('POST with an id never used creates it with that id; an id in use is a 409', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: { ...tag('x'), id: 500 } });
  assert.is(made.status, 201);
  assert.is(made.body.id, 500);
  const again = await h.request('POST', `${BASE}/tags`, { body: { ...tag('y'), id: 500 } });
  assert.is(again.status, 409);
  const next = await h.request('POST', `${BASE}/tags`, { body: tag('z') });
  assert.is(next.body.id, 501);
  const lower = await h.request('POST', `${BASE}/tags`, { body: { ...tag('w'), id: 7 } });
  assert.is(lower.body.id, 7);
  const list = await h.request('GET', `${BASE}/tags`);
  assert.equal(
    list.body.items.map((t: { id: number }) => t.id),
    [7, 500, 501],
  );
  assert.is(list.body.total, 3);
});

it('PUT replaces: required fields must be there, omitted optional ones go back to defaults', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/clients`, {
    body: { libelle: 'ACME', logo: 'acme.png', is_monitored: false },
  });
  const missing = await h.request('PUT', `${BASE}/clients/${made.body.id}`, { body: { logo: 'x' } });
  assert.is(missing.status, 422);
  assert.equal(
    missing.body.errors.map((e: { field: string }) => e.field),
    ['libelle'],
  );
  const replaced = await h.request('PUT', `${BASE}/clients/${made.body.id}`, { body: { libelle: 'ACME' } });
  assert.is(replaced.status, 200);
  assert.is(replaced.body.updated, true);
  assert.is(replaced.body.item.logo, '');
  assert.is(replaced.body.item.is_monitored, true);
  assert.is(replaced.body.item.version, 2);
  assert.is(replaced.headers.get('etag'), '"2"');
});

it('PATCH changes only the fields sent, in JSON or merge-patch+json', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'ACME', logo: 'acme.png' } });
  const patched = await h.request('PATCH', `${BASE}/clients/${made.body.id}`, {
    raw: JSON.stringify({ is_monitored: 0 }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  assert.is(patched.status, 200);
  assert.is(patched.body.item.is_monitored, false);
  assert.is(patched.body.item.logo, 'acme.png');
  assert.is(patched.body.item.libelle, 'ACME');
});

it('a write that changes nothing records no event and keeps the version', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: tag('same') });
  const before = h.service.revision;
  const put = await h.request('PUT', `${BASE}/tags/${made.body.id}`, { body: { ...tag('same'), name: '  same ' } });
  assert.is(put.status, 200);
  assert.is(put.body.changed, false);
  assert.is(put.body.item.version, 1);
  assert.is(put.headers.get('etag'), '"1"');
  const patch = await h.request('PATCH', `${BASE}/tags/${made.body.id}`, { body: { color: '#ffffff' } });
  assert.is(patch.body.item.version, 1);
  assert.is(h.service.revision, before);
  const history = await h.request('GET', `${BASE}/tags/${made.body.id}/history`);
  assert.is(history.body.items.length, 1);
});

it('a GET body can be sent back with PUT: read-only fields are ignored', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'Round trip' } });
  const read = await h.request('GET', `${BASE}/clients/${made.body.id}`);
  const put = await h.request('PUT', `${BASE}/clients/${made.body.id}`, {
    body: { ...read.body.item, logo: 'new.png' },
  });
  assert.is(put.status, 200);
  assert.is(put.body.item.logo, 'new.png');
  assert.is(put.body.item.date, read.body.item.date);
  const wrongId = await h.request('PUT', `${BASE}/clients/${made.body.id}`, {
    body: { ...read.body.item, id: made.body.id + 1 },
  });
  assert.is(wrongId.status, 422);
  assert.is(wrongId.body.errors[0].field, 'id');
});

it('If-Match: a stale version is a 412 and changes nothing; the current one or * passes', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: tag('v') });
  const path = `${BASE}/tags/${made.body.id}`;
  await h.request('PATCH', path, { body: { color: '#000000' } });
  for (const method of ['PUT', 'PATCH', 'DELETE']) {
    const stale = await h.request(method, path, {
      body: method === 'DELETE' ? undefined : tag('v2'),
      headers: { 'If-Match': '"1"' },
    });
    assert.is(stale.status, 412, method);
    assert.is(stale.body.code, 'precondition_failed');
  }
  assert.is((await h.request('GET', path)).body.item.name, 'v');
  const ok = await h.request('PATCH', path, { body: { name: 'v3' }, headers: { 'If-Match': 'W/"2"' } });
  assert.is(ok.status, 200);
  const star = await h.request('PATCH', path, { body: { name: 'v4' }, headers: { 'If-Match': '*' } });
  assert.is(star.body.item.version, 4);
});

it('If-None-Match on GET answers 304 when it matches', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: tag('etag') });
  const path = `${BASE}/tags/${made.body.id}`;
  const same = await h.request('GET', path, { headers: { 'If-None-Match': '"1"' } });
  assert.is(same.status, 304);
  assert.is(same.text, '');
  assert.is(same.headers.get('etag'), '"1"');
  const other = await h.request('GET', path, { headers: { 'If-None-Match': '"7"' } });
  assert.is(other.status, 200);
});

it('a hard-deleted entry answers 404 deleted, its history stays readable', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: tag('gone') });
  const path = `${BASE}/tags/${made.body.id}`;
  const deleted = await h.request('DELETE', path);
  assert.equal(deleted.body, { id: made.body.id, resource: 'tags', deleted: true, mode: 'hard' });
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
    const reply = await h.request(method, path, {
      body: method === 'PUT' || method === 'PATCH' ? tag('gone') : undefined,
    });
    assert.is(reply.status, 404, method);
    assert.is(reply.body.code, 'deleted', method);
  }
  const history = await h.request('GET', `${path}/history`);
  assert.equal(
    history.body.items.map((e: { type: string }) => e.type),
    ['TagCreated', 'TagDeleted'],
  );
  const never = await h.request('GET', `${BASE}/tags/999`);
  assert.is(never.body.code, 'not_found');
  assert.is((await h.request('GET', `${BASE}/tags/999/history`)).status, 404);
});

it('HEAD works wherever GET does, OPTIONS answers 204 with Allow, other methods 405 with Allow', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: tag('head') });
  const head = await h.request('HEAD', `${BASE}/tags/${made.body.id}`);
  assert.is(head.status, 200);
  assert.is(head.text, '');
  assert.is(head.headers.get('etag'), '"1"');
  assert.is((await h.request('HEAD', `${BASE}/tags`)).status, 200);
  assert.is((await h.request('HEAD', '/fr/api/openApi')).status, 200);
  const options = await h.request('OPTIONS', `${BASE}/tags/${made.body.id}`);
  assert.is(options.status, 204);
  assert.is(options.headers.get('allow'), 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS');
  const history = await h.request('OPTIONS', `${BASE}/tags/${made.body.id}/history`);
  assert.is(history.headers.get('allow'), 'GET, HEAD, OPTIONS');
  const wrong = await h.request('POST', `${BASE}/tags/${made.body.id}`, { body: tag('x') });
  assert.is(wrong.status, 405);
  assert.is(wrong.body.code, 'method_not_allowed');
  assert.is(wrong.headers.get('allow'), 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS');
  assert.is((await h.request('DELETE', `${BASE}/tags`)).headers.get('allow'), 'GET, HEAD, POST, OPTIONS');
});

it('a trailing slash is accepted', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags/`, { body: tag('slash') });
  assert.is(made.status, 201);
  assert.is((await h.request('GET', `${BASE}/tags/${made.body.id}/`)).status, 200);
  assert.is((await h.request('GET', `${BASE}/tags/`)).body.total, 1);
  assert.is((await h.request('GET', `${BASE}/tags/${made.body.id}/history/`)).status, 200);
});

it.run();
