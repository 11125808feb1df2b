import { createConnection } from 'mysql2/promise';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { collationKey } from '../../src/domain/shared/collation.js';
import { mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';

/**
 * collationKey against MariaDB itself: over every character of the Basic Multilingual Plane, two that
 * utf8mb4_general_ci (PmaControl's tables' collation) weighs alike share a key, so that a name this
 * service takes as new is never a duplicate in PmaControl's unique index. (The key may join more than
 * MariaDB does: the API is then the stricter one.) And the characters past that plane, all one weight
 * there, are one key here.
 */

const url = await mariadbUrl();

if (!url) skipWithoutMariadb('the collation against MariaDB');
else {
  test('two characters MariaDB weighs alike share a key, over the whole Basic Multilingual Plane', async () => {
    const connection = await createConnection({ uri: url });
    try {
      const characters: string[] = [];
      for (let point = 0x20; point <= 0xffff; point++) {
        if (point < 0xd800 || point > 0xdfff) characters.push(String.fromCodePoint(point));
      }
      const byWeight = new Map<string, string[]>();
      for (let start = 0; start < characters.length; start += 2000) {
        const slice = characters.slice(start, start + 2000);
        const weight = 'HEX(WEIGHT_STRING(CONVERT(? USING utf8mb4) COLLATE utf8mb4_general_ci))';
        const [rows] = await connection.query({
          sql: `SELECT ${slice.map(() => weight).join(',')}`,
          values: slice,
          rowsAsArray: true,
        });
        for (const [i, w] of (rows as string[][])[0].entries()) byWeight.set(w, [...(byWeight.get(w) ?? []), slice[i]]);
      }
      const split: string[] = [];
      for (const group of byWeight.values()) {
        const keys = new Set(group.map(collationKey));
        if (keys.size > 1) split.push(group.slice(0, 8).join(' '));
      }
      assert.equal(split, [], 'groups MariaDB holds equal and this key does not');
      assert.ok(byWeight.size > 40_000, `${byWeight.size} weights read`);
    } finally {
      await connection.end();
    }
  });

  test('names as PmaControl compares them: the pairs of the issue, and astral characters', async () => {
    const connection = await createConnection({ uri: url });
    try {
      const pairs = [
        ['Zürich-db', 'zurich-db'],
        ['İstanbul-db', 'istanbul-db'],
        ['Client 🚀', 'Client 🐬'],
        ['Straße', 'strase'],
      ];
      for (const [a, b] of pairs) {
        const [rows] = await connection.query(
          'SELECT CONVERT(? USING utf8mb4) COLLATE utf8mb4_general_ci = CONVERT(? USING utf8mb4) AS same',
          [a, b],
        );
        assert.is((rows as { same: number }[])[0].same, 1, `MariaDB: ${a} = ${b}`);
        assert.is(collationKey(a), collationKey(b), `here: ${a} = ${b}`);
      }
    } finally {
      await connection.end();
    }
  });

  test.run();
}
