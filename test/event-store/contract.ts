import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type EventStore, type RecordedEvent, WrongExpectedRevision } from '../../src/event-store/port.js';

const event = (type: string, n: number) => ({ type, data: { n }, metadata: { actor: 'test', request_id: `r${n}` } });

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

type Context = { store: EventStore; stream: string };

/** The behaviour every adapter of the port must have. */
const CASES: [string, (ctx: Context) => Promise<void>][] = [
  [
    'append to a new stream with no_stream, then with the last revision',
    async ({ store, stream }) => {
      const first = await store.append(stream, [event('A', 1), event('B', 2)], 'no_stream');
      assert.is(first.nextRevision, 1);
      const second = await store.append(stream, [event('C', 3)], 1);
      assert.is(second.nextRevision, 2);
      assert.is(await store.head(stream), 2);
      assert.is(await store.head(`${stream}-none`), -1, 'no event yet');
      const events = await store.readStream(stream);
      assert.equal(
        events.map((e) => [e.revision, e.type, e.data, e.metadata.request_id]),
        [
          [0, 'A', { n: 1 }, 'r1'],
          [1, 'B', { n: 2 }, 'r2'],
          [2, 'C', { n: 3 }, 'r3'],
        ],
      );
      assert.ok(events[0].position < events[1].position && events[1].position < events[2].position);
    },
  ],
  [
    'a wrong expected revision appends nothing',
    async ({ store, stream }) => {
      await store.append(stream, [event('A', 1)], 'no_stream');
      for (const expected of ['no_stream', 5, -1] as const) {
        try {
          await store.append(stream, [event('X', 9)], expected);
          assert.unreachable(`appended with ${expected}`);
        } catch (error) {
          assert.instance(error, WrongExpectedRevision);
        }
      }
      try {
        await store.append(`${stream}-other`, [event('X', 9)], 0);
        assert.unreachable('appended to a missing stream with a revision');
      } catch (error) {
        assert.instance(error, WrongExpectedRevision);
      }
      assert.is((await store.readStream(stream)).length, 1);
      assert.equal(await store.readStream(`${stream}-other`), []);
    },
  ],
  [
    'concurrent appends at the same expected revision: exactly one wins',
    async ({ store, stream }) => {
      await store.append(stream, [event('A', 0)], 'no_stream');
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => store.append(stream, [event('R', i)], 0)),
      );
      assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
      assert.is((await store.readStream(stream)).length, 2);
    },
  ],
  [
    'readStream from a revision with a maximum count',
    async ({ store, stream }) => {
      await store.append(
        stream,
        [1, 2, 3, 4, 5].map((n) => event('N', n)),
        'no_stream',
      );
      const page = await store.readStream(stream, { fromRevision: 2, maxCount: 2 });
      assert.equal(
        page.map((e) => e.revision),
        [2, 3],
      );
      assert.equal(await store.readStream(stream, { fromRevision: 10 }), []);
    },
  ],
  [
    'readAll returns every stream in position order, after a position',
    async ({ store, stream }) => {
      await store.append(stream, [event('A', 1)], 'no_stream');
      await store.append(`${stream}-b`, [event('B', 2)], 'no_stream');
      await store.append(stream, [event('C', 3)], 0);
      const all = (await store.readAll()).filter((e) => e.stream.startsWith(stream));
      assert.equal(
        all.map((e) => e.type),
        ['A', 'B', 'C'],
      );
      const after = (await store.readAll({ after: all[0].position })).filter((e) => e.stream.startsWith(stream));
      assert.equal(
        after.map((e) => e.type),
        ['B', 'C'],
      );
    },
  ],
  [
    'subscribe catches up from a revision, then delivers new events in order',
    async ({ store, stream }) => {
      await store.append(stream, [event('A', 0), event('B', 1), event('C', 2)], 'no_stream');
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribe(stream, 1, (e) => seen.push(e));
      await waitFor(() => seen.length === 2, 'catch-up');
      await store.append(stream, [event('D', 3)], 2);
      await waitFor(() => seen.length === 3, 'live event');
      assert.equal(
        seen.map((e) => e.revision),
        [1, 2, 3],
      );
      await subscription.close();
      await store.append(stream, [event('E', 4)], 3);
      await new Promise((r) => setTimeout(r, 50));
      assert.is(seen.length, 3);
    },
  ],
];

/** Runs the contract once per adapter. */
export function storeContract(name: string, open: () => Promise<EventStore>, options: { unique?: () => string } = {}) {
  const it = suite<Context>(`event store contract: ${name}`);
  const unique = options.unique ?? (() => '');
  it.before.each(async (ctx) => {
    ctx.store = await open();
    ctx.stream = `contract${unique()}-1`;
  });
  it.after.each(async ({ store }) => store.close());
  for (const [title, run] of CASES) it(title, run);
  it.run();
}
