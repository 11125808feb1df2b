import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { replay } from '../../src/application/replay.js';
import { RESOURCE_NAMES as RESOURCES, type ResourceName as Resource } from '../../src/domain/resources.js';
import { leafOf } from '../../src/log/index.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import { adminRequests, entriesOf, prerequisites, validBody } from '../support/bodies.js';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const MAX = Number.MAX_SAFE_INTEGER;
const ids = (request: Harness['request'], resource: Resource) =>
  request('GET', `${entriesOf(resource)}`).then((r) => r.body.items.map((e: { id: number }) => e.id) as number[]);

/** Explicit ids at both ends of the range, and anywhere in between; `undefined`: let the service allocate. */
const requestedId = fc.oneof(
  fc.constantFrom(1, 2, 3, 98, 99, 100, MAX - 2, MAX - 1, MAX),
  fc.integer({ min: 1, max: MAX }),
  fc.constant(undefined),
  fc.constant(undefined),
);

const it = suite('ids: allocation stays in the safe range and never overwrites an entry (property)');

for (const resource of RESOURCES) {
  it(`${resource}: explicit and allocated ids at both ends of the range`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestedId, { minLength: 1, maxLength: 8 }), async (requests) => {
        const h = await startHarness();
        const request = await adminRequests(h);
        try {
          const refs = await prerequisites(h);
          const used = new Set(await ids(request, resource));
          const names = new Map<number, unknown>();
          let n = 0;
          for (const id of requests) {
            n += 1;
            const sent = { ...validBody(resource, n, refs), ...(id === undefined ? {} : { id }) };
            const before = h.service.revision;
            const reply = await request('POST', `${entriesOf(resource)}`, { body: sent });
            const highest = Math.max(0, ...used);
            const expected =
              id === undefined ? (highest >= MAX ? 'exhausted' : highest + 1) : used.has(id) ? 'taken' : id;
            if (typeof expected === 'number') {
              assert.is(reply.status, 201, reply.text);
              assert.is(reply.body.id, expected);
              used.add(expected);
              names.set(expected, reply.body.item);
            } else {
              assert.equal([reply.status, reply.body.code], [409, 'conflict'], reply.text);
              if (expected === 'exhausted') assert.match(reply.body.detail, /exhausted/);
              assert.is(h.service.revision, before, 'a refused create appends nothing');
            }
          }
          for (const [id, item] of names) {
            const read = await request('GET', `${entriesOf(resource)}/${id}`);
            assert.equal(read.body.item, item, `${resource}/${id} was overwritten`);
          }
          assert.equal(new Set(await ids(request, resource)), used);
          const report = await replay(h.store, h.readModels, new SqliteReadModelStore(':memory:'), leafOf);
          assert.equal(report.differences, []);
        } finally {
          await h.close();
        }
      }),
      { numRuns: 12 },
    );
  });
}

it('after the highest id is taken, explicit free ids below it still work', async () => {
  const h = await startHarness();
  const request = await adminRequests(h);
  try {
    const top = await request('POST', `${BASE}/tags`, {
      body: { ...validBody('tags', 1, { server: 0, sshKey: 0 }), id: MAX },
    });
    assert.is(top.body.id, MAX);
    const refused = await request('POST', `${BASE}/tags`, { body: validBody('tags', 2, { server: 0, sshKey: 0 }) });
    assert.equal([refused.status, refused.body.code], [409, 'conflict']);
    const below = await request('POST', `${BASE}/tags`, {
      body: { ...validBody('tags', 3, { server: 0, sshKey: 0 }), id: 5 },
    });
    assert.is(below.status, 201);
    assert.equal(await ids(request, 'tags'), [5, MAX]);
  } finally {
    await h.close();
  }
});

it.run();
