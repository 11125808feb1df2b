import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';

/**
 * Names people read as equal are one name: unique names compare as PmaControl's MariaDB collation
 * compares them (case and accents ignored) after NFC normalisation; what people cannot read as written
 * (an invisible character, ill-formed Unicode, letters of two alphabets that pass for one another) is a
 * 422 on its field.
 */
const it = suite<{ h: Harness }>('names people read as equal');

it.before.each(async (context) => {
  context.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

const server = (name: string, ip: string) => ({
  id_client: 99,
  id_environment: 1,
  name,
  ip,
  login: 'monitor',
  passwd: 'x',
});
const tag = (name: string) => ({ name, color: '#112233', background: '#FFFFFF' });

it('Zürich-db and zurich-db, İstanbul-db and istanbul-db, NFC and NFD: the second is a 409 naming the first', async ({
  h,
}) => {
  const pairs: [string, string][] = [
    ['Zürich-db', 'zurich-db'],
    ['İstanbul-db', 'istanbul-db'],
    ['Café-db', 'Cafe\u0301-DB'],
    ['Straße-db', 'strase-db'],
  ];
  for (const [index, [first, second]] of pairs.entries()) {
    const made = await h.request('POST', `${BASE}/servers`, { body: server(first, `10.1.${index}.1`) });
    assert.is(made.status, 201, first);
    const again = await h.request('POST', `${BASE}/servers`, { body: server(second, `10.1.${index}.2`) });
    assert.is(again.status, 409, `${second} after ${first}`);
    assert.equal(again.body.conflict, { resource: 'servers', id: made.body.id, fields: ['name'] });
  }
  const ix = await h.request('POST', `${BASE}/tags`, { body: tag('İx') });
  assert.is(ix.status, 201);
  assert.is((await h.request('POST', `${BASE}/tags`, { body: tag('ix') })).status, 409);
  assert.is(
    (await h.request('PATCH', `${BASE}/tags/${ix.body.id}`, { body: { name: 'IX' } })).status,
    200,
    'its own name',
  );
});

it('a name sent in NFD is stored in NFC', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'Cafe\u0301 Paris' } });
  assert.is(made.status, 201);
  assert.is(made.body.item.libelle, 'Caf\u00e9 Paris');
});

it('an invisible character, a lone surrogate, Latin mixed with Cyrillic: a 422 on the field', async ({ h }) => {
  const cases: [string, string][] = [
    ['db\u200b-paris', 'invisible_character'],
    ['db-\u202eparis', 'invisible_character'],
    ['d\u0430tabase', 'mixed_scripts'], // а: CYRILLIC SMALL LETTER A
  ];
  for (const [index, [name, code]] of cases.entries()) {
    const answer = await h.request('POST', `${BASE}/servers`, { body: server(name, `10.2.${index}.1`) });
    assert.is(answer.status, 422, JSON.stringify(name));
    assert.equal(
      answer.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
      [['name', code]],
    );
  }
  const lone = await h.request('POST', `${BASE}/tags`, {
    raw: '{"name": "x\\ud800y", "color": "#112233", "background": "#FFFFFF"}',
    headers: { 'content-type': 'application/json' },
  });
  assert.is(lone.status, 422);
  assert.equal(lone.body.errors[0].code, 'ill_formed');
  const hidden = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'ACME', logo: 'a\u2066b' } });
  assert.is(hidden.status, 422, 'any text field, not only names');
  const fine = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'Москва-2 東京' } });
  assert.is(fine.status, 201, 'Cyrillic with digits and Han: fine');
  const mixed = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'Москва-DC' } });
  assert.equal([mixed.status, mixed.body.errors?.[0].code], [422, 'mixed_scripts'], 'Latin letters beside Cyrillic');
});

it('an older log that holds two such names still replays, and the first keeps its name', async () => {
  const h = await startHarness();
  try {
    const store = h.store;
    const first = await h.request('POST', `${BASE}/tags`, { body: tag('Zürich') });
    // Written as an older release took it, straight into the log: a second tag of the same name.
    const revision = h.service.revision;
    const data = { id: 500, name: 'zurich', color: '#112233', background: '#FFFFFF' };
    const metadata = { actor: 'old', request_id: 'old', at: new Date().toISOString(), entry: 'tag-500', schema: 2 };
    await store.append('pmacontrol-config', [{ type: 'TagCreated', data, metadata }], revision);
    await h.service.projector.catchUp();
    const both = (await h.request('GET', `${BASE}/tags`)).body.items.map((t: { name: string }) => t.name);
    assert.ok(both.includes('Zürich') && both.includes('zurich'), both.join());
    const again = await h.request('POST', `${BASE}/tags`, { body: tag('ZURICH') });
    assert.is(again.status, 409);
    assert.is(again.body.conflict.id, first.body.id, 'the first holder stays first');
  } finally {
    await h.close();
  }
});

it.run();
