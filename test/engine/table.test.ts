import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resourceOf } from '../../src/domain/resources.js';
import { Journal } from '../../src/engine/journal.js';
import { type EntryRecord, Table } from '../../src/engine/table.js';
import { keyHash } from '../../src/engine/unique-index.js';

import { random } from '../support/random.js';

/**
 * A collection's indexes (unique values, references) are kept by `put`, which moves only the keys
 * and references whose values changed. After thousands of random changes (renames, case changes,
 * new addresses, moves between clients, tag sets, hard deletes and returns, changes undone by a
 * journal), every unique value must point at the entry that holds it and every reference at the
 * entries that make it, exactly as a model of the final entries says.
 */

const NAMES = ['alpha', 'Alpha', 'beta', 'gamma', 'delta', 'BETA', 'omega', 'kappa', 'sigma', 'tau'];
const IPS = ['10.0.0.1', '10.0.0.2', 'DB.example', 'db.example'];
const PORTS = [3306, 3307];
const CLIENTS = [99, 100, 101];
const ENVIRONMENTS = [1, 2];
const TAGS = [1, 2, 3, 4];

const fold = (text: string) => text.toLowerCase();

const address = (e: Record<string, unknown>) => `${fold(e.ip as string)}:${e.port}`;

/** `steps` random changes to `servers`, mirrored in `live` (the model) when they stay. */
function churn(servers: Table, live: Map<number, EntryRecord>, steps: number, seed = 7): void {
  const pick = random(seed);
  const taken = (field: (e: EntryRecord) => string, value: string, self: number) =>
    [...live.values()].some((e) => e.id !== self && field(e) === value);
  for (let step = 0; step < steps; step++) {
    const id = 1 + pick(12);
    const before = live.get(id);
    if (before && pick(10) === 0) {
      servers.put(id, undefined);
      live.delete(id);
      continue;
    }
    const fresh = { id, version: 0, created_at: 'then', updated_at: 'then', tags: [] };
    const next: EntryRecord = { ...(before ?? fresh), version: (before?.version ?? 0) + 1 };
    const name = NAMES[pick(NAMES.length)];
    if (!taken((e) => fold(e.name as string), fold(name), id)) next.name = name;
    const [ip, port] = [IPS[pick(IPS.length)], PORTS[pick(PORTS.length)]];
    if (!taken(address, address({ ip, port }), id)) Object.assign(next, { ip, port });
    if (next.name === undefined || next.ip === undefined) continue;
    next.id_client = pick(3) === 0 ? CLIENTS[pick(CLIENTS.length)] : (before?.id_client ?? 99);
    next.id_environment = pick(4) === 0 ? ENVIRONMENTS[pick(2)] : (before?.id_environment ?? 1);
    if (pick(3) === 0) next.tags = TAGS.filter(() => pick(2) === 0);
    if (pick(8) === 0) {
      // Decided, then refused: the journal puts everything back.
      const journal = new Journal();
      servers.put(id, next, journal);
      journal.rollback();
      continue;
    }
    servers.put(id, next);
    live.set(id, next);
  }
}

test('indexes after 5,000 random changes are those of the final entries', () => {
  const servers = new Table(resourceOf('servers').table);
  const live = new Map<number, EntryRecord>();
  churn(servers, live, 5000);
  assert.ok(live.size > 3, `a few entries remain: ${live.size}`);
  const holderOf = (match: (e: EntryRecord) => boolean) => [...live.values()].find(match)?.id;
  for (const name of NAMES) {
    const holder = holderOf((e) => fold(e.name as string) === fold(name));
    assert.is(servers.conflict({ name, ip: 'nowhere', port: 1 }, -1)?.id, holder, `name ${name}`);
  }
  for (const ip of IPS) {
    for (const port of PORTS) {
      const holder = holderOf((e) => address(e) === address({ ip, port }));
      assert.is(servers.conflict({ name: 'nobody', ip, port }, -1)?.id, holder, `address ${ip}:${port}`);
    }
  }
  const referencing = (field: string, target: number) =>
    [...live.values()]
      .filter((e) => (Array.isArray(e[field]) ? (e[field] as number[]).includes(target) : e[field] === target))
      .map((e) => e.id);
  const links = { id_client: CLIENTS, id_environment: ENVIRONMENTS, tags: TAGS };
  for (const [field, targets] of Object.entries(links)) {
    for (const target of targets) {
      const ids = [...servers.referencing(field, target)].sort((a, b) => a - b);
      assert.equal(
        ids,
        referencing(field, target).sort((a, b) => a - b),
        `${field} ${target}`,
      );
    }
  }
});

// The id order is kept as entries change (in place, at the end, or moved in the middle, then sorted
// again after too many moves), and an order handed out is a snapshot: later changes copy it first.
test('the id order follows every change, and an order handed out stays as it was', () => {
  const servers = new Table(resourceOf('servers').table);
  const live = new Map<number, EntryRecord>();
  for (let round = 0; round < 600; round++) {
    const handed = servers.inOrder();
    const then = [...handed];
    churn(servers, live, 1 + (round % 15), round);
    const expected = [...live.values()].sort((a, b) => a.id - b.id);
    const order = servers.inOrder();
    assert.equal(
      order.map((e) => e.id),
      expected.map((e) => e.id),
      `ids in order after round ${round}`,
    );
    assert.ok(
      order.every((entry, i) => entry === expected[i]),
      `the entries themselves, round ${round}`,
    );
    assert.ok(
      handed.length === then.length && handed.every((entry, i) => entry === then[i]),
      `handed out, round ${round}`,
    );
  }
});

test('values that share a hash are told apart; case folds as toLowerCase does, past ASCII too', () => {
  const tags = new Table(resourceOf('tags').table);
  const [key] = resourceOf('tags').declaration.unique!;
  const tag = (id: number, name: string) =>
    ({
      id,
      name,
      color: '#000000',
      background: '#FFFFFF',
      version: 1,
      created_at: 'c',
      updated_at: 'u',
    }) as EntryRecord;
  // Names until two share a hash (a 30-bit hash: a few tens of thousands of names).
  const byHash = new Map<number, number>();
  const names: string[] = [];
  let pair: [number, number] | undefined;
  for (let id = 1; !pair; id++) {
    names[id] = `tag-${id}`;
    const hash = keyHash(key, { name: names[id] });
    if (byHash.has(hash)) pair = [byHash.get(hash)!, id];
    byHash.set(hash, id);
  }
  const [a, b] = pair;
  tags.put(a, tag(a, names[a]));
  assert.is(tags.conflict({ name: names[b] }, -1), undefined, 'another value with the same hash is free');
  tags.put(b, tag(b, names[b]));
  assert.is(tags.conflict({ name: names[a].toUpperCase() }, -1)?.id, a);
  assert.is(tags.conflict({ name: names[b] }, -1)?.id, b);
  assert.is(tags.conflict({ name: names[b] }, b), undefined, 'an entry does not conflict with itself');
  tags.put(a, undefined);
  assert.is(tags.conflict({ name: names[a] }, -1), undefined);
  assert.is(tags.conflict({ name: names[b] }, -1)?.id, b);
  // The Kelvin sign lower-cases to an ASCII k: one value, whichever way it is written.
  tags.put(7, tag(7, '\u212Aelvin'));
  assert.is(tags.conflict({ name: 'kelvin' }, -1)?.id, 7);
  assert.is(tags.conflict({ name: 'KELVIN' }, -1)?.id, 7);
  tags.put(8, tag(8, 'Straße'));
  assert.is(tags.conflict({ name: 'straße' }, -1)?.id, 8);
  assert.is(tags.conflict({ name: 'strasse' }, -1), undefined);
});

test('a number and its text are two values of a key', () => {
  const servers = new Table(resourceOf('servers').table);
  const server = { id: 1, name: 'one', ip: '10.0.0.1', port: 3306, version: 1, created_at: 'c', updated_at: 'u' };
  servers.put(1, server as EntryRecord);
  assert.is(servers.conflict({ name: 'two', ip: '10.0.0.1', port: 3306 }, -1)?.id, 1);
  assert.is(servers.conflict({ name: 'two', ip: '10.0.0.1', port: '3306' }, -1), undefined);
  assert.is(servers.conflict({ name: 'two', ip: '10.0.0.1', port: 3306.5 }, -1), undefined);
});

test.run();
