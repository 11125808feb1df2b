import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { VersionRow } from '../../projections/changes.js';
import type { EntryState, ProjectionBatch } from '../../src/read-models/port.js';
import { BulkBatches, CONSISTENT_EVERY } from '../../src/read-models/sqlite/bulk-batches.js';
import type { SaveJob } from '../../src/read-models/sqlite/save-jobs.js';

/**
 * A rebuild holds entries back until a list snapshot needs them (it is copied from the entries in
 * the file) or the end: every batch that makes one due must carry every entry changed since the
 * last one sent, and the last batch whatever is still held.
 */

const it = suite('a rebuild holds entries back');

let revision = 0;

/** A batch of `rows` version rows of tags: the first `appear` of them create tags, `deleted` hard-deletes one. */
function batch(rows: number, changed: EntryState[], appear = 0, deleted?: number): ProjectionBatch {
  const versions: VersionRow[] = Array.from({ length: rows }, (_, i) => ({
    resource: 'tags',
    entry_id: i + 1,
    revision: 1,
    position: revision + 1,
    diff: [],
    ...(i < appear ? { appears: true as const } : {}),
  }));
  if (deleted) versions[rows - 1] = { ...versions[rows - 1], entry_id: deleted, deleted: true };
  revision += rows;
  return {
    revision,
    digest: 'd',
    highWaterAt: '2026-01-01T00:00:00.000Z',
    entries: changed,
    lastIds: { tags: 100 },
    nodes: [],
    edge: `[${revision + 1}]`,
    changes: [],
    versions,
    requests: [],
  };
}

const tag = (id: number, name: string): EntryState => ({
  resource: 'tags',
  id,
  entry: { id, name, version: 1, created_at: 'c', updated_at: 'u' },
});

const doc = (id: number, name: string) => JSON.stringify(tag(id, name).entry);

/** The entries a job writes: id and doc (null: deleted), in the order written. */
const written = (job: SaveJob) => {
  const out: [unknown, unknown][] = [];
  for (let i = 0; i < job.entries.length; i += 5) out.push([job.entries[i + 1], job.entries[i + 2]]);
  return out;
};

it('entries go with the batch that makes a list snapshot due, and with the last one', () => {
  const jobs: SaveJob[] = [];
  const batches = new BulkBatches((job) => jobs.push(job));
  // 1,000 version rows of tags, 100 of them creations: a snapshot is due, of 100 tags.
  batches.add(batch(1000, [tag(1, 'a'), tag(2, 'b')], 100));
  assert.is(jobs.length, 1, 'a batch that makes a snapshot due is sent at once');
  assert.equal(jobs[0].listsDue, ['tags']);
  assert.equal(written(jobs[0]), [
    [1, doc(1, 'a')],
    [2, doc(2, 'b')],
  ]);
  // The next one is due 10 × 100 rows later: 600 rows are not enough, and the batch is kept.
  batches.add(batch(600, [tag(5, 'e'), tag(1, 'a2')]));
  assert.is(jobs.length, 1, 'the batch is kept until the next one');
  batches.add(batch(400, [tag(7, 'g'), tag(5, 'e2')]));
  assert.is(jobs.length, 3);
  assert.equal([jobs[1].listsDue, written(jobs[1])], [[], []], 'entries sent before a snapshot needs them');
  assert.equal(jobs[2].listsDue, ['tags']);
  assert.equal(written(jobs[2]), [
    [5, doc(5, 'e2')],
    [1, doc(1, 'a2')],
    [7, doc(7, 'g')],
  ]);
  // A hard delete, not due; the end sends it with what is held.
  const tombstone = { version: 3, created_at: '2026-01-01T00:00:00.000Z' };
  batches.add(batch(10, [{ resource: 'tags', id: 9, tombstone }], 0, 9));
  assert.is(jobs.length, 3);
  batches.flush();
  assert.is(jobs.length, 4);
  assert.equal([jobs[3].listsDue, written(jobs[3])], [[], [[9, null]]]);
  assert.equal(jobs[3].entries.slice(3), [3, '2026-01-01T00:00:00.000Z']);
  batches.flush();
  assert.is(jobs.length, 4, 'nothing is sent twice');
});

it('an entry that appears is written with its batch; changes after it are held', () => {
  const jobs: SaveJob[] = [];
  const batches = new BulkBatches((job) => jobs.push(job));
  batches.add(batch(1000, []));
  // Tags 1 to 5 appear in this batch (tag 3 among them); tag 50 only changes.
  batches.add(batch(10, [tag(3, 'c'), tag(50, 'x')], 5));
  batches.add(batch(10, [tag(3, 'c2')]));
  batches.flush();
  assert.equal(jobs.map(written), [
    [],
    [[3, doc(3, 'c')]],
    [
      [50, doc(50, 'x')],
      [3, doc(3, 'c2')],
    ],
  ]);
  assert.equal(
    jobs.map((job) => job.listsDue),
    [['tags'], [], []],
  );
});

it('the size of the list counts creations and hard deletes', () => {
  const jobs: SaveJob[] = [];
  const batches = new BulkBatches((job) => jobs.push(job));
  // 1,000 rows: 300 creations, one hard delete: a snapshot of 299 tags is due; the next 2,990 rows later.
  batches.add(batch(1000, [], 300, 1));
  batches.add(batch(2989, []));
  batches.add(batch(1, []));
  batches.flush();
  assert.equal(
    jobs.map((job) => job.listsDue),
    [['tags'], [], ['tags']],
  );
});

it('a job with every entry held is a consistent point: one at least every CONSISTENT_EVERY events, counted from where the file stands', () => {
  const jobs: SaveJob[] = [];
  // A file resumed at `revision`, whose list of tags is so long that no snapshot falls due here.
  const start = { revision, lists: new Map([['tags', { rows: 0, size: 10_000_000, present: 10_000_000 }]]) };
  const batches = new BulkBatches((job) => jobs.push(job), start);
  const from = revision;
  while (revision - from < CONSISTENT_EVERY + 5_000)
    batches.add(batch(1000, [tag(1 + (revision % 7), `n${revision}`)]));
  const points = jobs.filter((job) => job.consistent);
  assert.is(points.length, 1);
  assert.ok(points[0].revision - from >= CONSISTENT_EVERY && points[0].revision - from < CONSISTENT_EVERY + 1000);
  assert.is(written(points[0]).length, 7, 'the point carries every entry held, each once, at its last state');
  assert.ok(
    jobs.filter((job) => !job.consistent).every((job) => job.entries.length === 0),
    'no other job writes an entry that was held',
  );
  assert.ok(jobs.every((job) => job.listsDue?.length === 0));
  batches.flush();
  assert.ok(jobs[jobs.length - 1].consistent, 'the end is one');
});

it.run();
