// An entry's JSON is written member by member by a function compiled per resource; it must be the
// text JSON.stringify gives for the presented entry, byte for byte, whatever the values hold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCE_NAMES, resourceOf } from '../../src/domain/resources.js';
import type { EntryRecord } from '../../src/engine/table.js';
import { present, presentJson } from '../../src/http/present.js';
import { random } from '../support/random.js';

/** Values JSON.stringify treats each in its own way. */
const VALUES: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  -0,
  42,
  -3.5,
  1e21,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '',
  'db-paris-01',
  'quote " backslash \\ slash / tab \t newline \n nul \u0000 escape \u001b',
  'accents éü, CJK 数据库, emoji 🐬, lone surrogate \ud800 and \udfff',
  '</script><!--',
  [],
  [1, 'two', null, [3]],
  { nested: { deeper: ['x', 1.5, false] }, 'odd "key"': 'v' },
  () => 'a function',
  Symbol('a symbol'),
];

test('presentJson gives the text of JSON.stringify(present(…)) for every resource and value', () => {
  const pick = random(10);
  let compared = 0;
  for (const resource of RESOURCE_NAMES) {
    const declared = resourceOf(resource);
    const names = [
      'id',
      ...declared.fieldNames,
      ...Object.keys(declared.outputs),
      'version',
      'created_at',
      'is_deleted',
    ];
    for (let round = 0; round < 300; round++) {
      const entry: Record<string, unknown> = { id: 1 + pick(1000), version: 1 + pick(9) };
      for (const name of names) if (pick(4) > 0) entry[name] = VALUES[pick(VALUES.length)];
      // Members the presented entry does not show must not matter either.
      entry.not_a_field = VALUES[pick(VALUES.length)];
      const expected = JSON.stringify(present(resource, entry as EntryRecord));
      assert.is(presentJson(resource, entry as EntryRecord), expected, `${resource}: ${expected}`);
      compared++;
    }
  }
  assert.is(compared, RESOURCE_NAMES.length * 300);
});

test('a server is shown in declaration order, secrets left out, derived members after', () => {
  const server = {
    id: 7,
    name: 'db-1',
    ip: '10.0.0.1',
    port: 3306,
    passwd: 'sealed',
    has_passwd: true,
    version: 2,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-02T00:00:00.000Z',
  } as unknown as EntryRecord;
  const shown = JSON.parse(presentJson('servers', server));
  assert.is(shown.passwd, undefined);
  assert.is(shown.is_deleted, false);
  const keys = Object.keys(shown);
  assert.is(keys[0], 'id');
  assert.equal(keys.slice(-3), ['version', 'created_at', 'updated_at']);
  assert.ok(keys.indexOf('name') < keys.indexOf('ip') && keys.indexOf('ip') < keys.indexOf('port'));
});

test.run();
