import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resourceOf } from '../../src/domain/resources.js';
import { type EntryRecord, Table } from '../../src/engine/table.js';

import { type ListAnswer, plainList } from '../../src/http/list-body.js';
import { present } from '../../src/http/present.js';
import { random } from '../support/random.js';

/**
 * The plain list of a resource is kept between changes, in pieces of 256 entries, and a list made
 * after a change takes the pieces whose entries did not change from the one before. Whatever the
 * change (an entry replaced, added at the end, taken from the middle, put back in the middle), the
 * list sent must be the collection's entries as they are, every byte of it, and its length right.
 */

const tag = (id: number, version: number): EntryRecord => ({
  id,
  name: `tag-${id}-v${version}`,
  color: '#000000',
  background: '#FFFFFF',
  version,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

/** The bytes of an answer, read as a client would; the stream counts the turns of the event loop it took. */
async function bytesOf({ body, length }: ListAnswer): Promise<{ text: string; turns: number }> {
  if (Buffer.isBuffer(body)) {
    assert.is(length ?? body.length, body.length);
    return { text: body.toString(), turns: 0 };
  }
  let [turns, ended] = [0, false];
  const counting = (async () => {
    while (!ended) {
      await nextTurn();
      turns++;
    }
  })();
  const chunks: Buffer[] = [];
  for await (const chunk of body as Readable) chunks.push(chunk as Buffer);
  ended = true;
  await counting;
  const whole = Buffer.concat(chunks);
  if (length !== undefined) assert.is(length, whole.length, 'the length given is that of the bytes sent');
  return { text: whole.toString(), turns };
}

const expected = (tags: Table) => ({
  items: [...tags.values()].sort((a, b) => a.id - b.id).map((entry) => present('tags', entry)),
  total: tags.size,
});

test('after every kind of change, the plain list is the entries as they are', async () => {
  const tags = new Table(resourceOf('tags').table);
  for (let id = 1; id <= 1500; id++) tags.put(id, tag(id, 1));
  const pick = random(3);
  const changes: [string, () => void][] = [
    [
      'replaced',
      () => {
        const id = 1 + pick(1500);
        tags.put(id, tag(id, 2));
      },
    ],
    [
      'replaced twice in one piece',
      () => {
        for (const id of [10, 20]) tags.put(id, tag(id, 3));
      },
    ],
    ['added at the end', () => tags.put(tags.lastId + 1, tag(tags.lastId + 1, 1))],
    ['taken from the middle', () => tags.put(700, undefined)],
    ['put back in the middle', () => tags.put(700, tag(700, 5))],
    ['taken from the end', () => tags.put(tags.lastId, undefined)],
  ];
  const first = await bytesOf(plainList('tags', tags));
  assert.equal(JSON.parse(first.text), expected(tags));
  assert.ok(first.turns >= 6, `a long list is made over several turns of the event loop (${first.turns})`);
  for (const [what, change] of changes) {
    change();
    const made = await bytesOf(plainList('tags', tags));
    assert.equal(JSON.parse(made.text), expected(tags), what);
    const again = await bytesOf(plainList('tags', tags));
    assert.is(again.text, made.text, `${what}: sent again as it was made`);
    for (let turn = 0; turn < 20; turn++) await nextTurn(); // its pieces are joined meanwhile
    const joined = plainList('tags', tags).body;
    assert.ok(Buffer.isBuffer(joined), `${what}: then sent in one buffer`);
    assert.is(joined.toString(), made.text, `${what}: joined`);
  }
});

test('a short list is one buffer, kept until the next change', async () => {
  const tags = new Table(resourceOf('tags').table);
  for (let id = 1; id <= 3; id++) tags.put(id, tag(id, 1));
  const answer = plainList('tags', tags);
  assert.ok(Buffer.isBuffer(answer.body));
  assert.is(plainList('tags', tags).body, answer.body, 'the same bytes, not made again');
  tags.put(2, tag(2, 2));
  assert.equal(JSON.parse((await bytesOf(plainList('tags', tags))).text), expected(tags));
  const empty = new Table(resourceOf('tags').table);
  assert.equal(JSON.parse((await bytesOf(plainList('tags', empty))).text), { items: [], total: 0 });
});

test.run();
