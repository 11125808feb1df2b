import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyIn, unheldCharacter } from '../../src/pmacontrol/charsets.js';
import { PMACONTROL_SCHEMA } from '../../src/pmacontrol/columns.js';
import { KEPT } from '../../src/pmacontrol/rows.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { withSchema } from '../support/pmacontrol-tables.js';

const url = await mariadbUrl();
const it = suite("PmaControl's columns and collations, as MariaDB holds them");

type Row = Record<string, unknown>;

if (!url) skipWithoutMariadb("PmaControl's columns");
else {
  it("columns.ts says what the fixture's tables are: types, lengths, charsets, collations, unique keys", async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const connection = await createConnection({ uri: db.url });
    try {
      const [columns] = (await connection.query(
        'SELECT TABLE_NAME t, COLUMN_NAME c, DATA_TYPE type, CHARACTER_MAXIMUM_LENGTH len, CHARACTER_SET_NAME cs, COLLATION_NAME coll, IS_NULLABLE nul FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()',
      )) as unknown as [Row[]];
      for (const [table, schema] of Object.entries(PMACONTROL_SCHEMA)) {
        for (const [name, column] of Object.entries(schema.columns)) {
          const found = columns.find((c) => c.t === table && c.c === name);
          assert.ok(found, `${table}.${name} is in the fixture`);
          const text = column.type === 'varchar' || column.type === 'char';
          assert.equal(
            [found!.type, text ? Number(found!.len) : undefined, found!.cs ?? undefined, found!.coll ?? undefined],
            [column.type, column.length, column.charset, column.collation],
            `${table}.${name}`,
          );
          assert.is(found!.nul === 'YES', column.nullable === true, `${table}.${name} nullable`);
        }
      }
      const [keys] = (await connection.query(
        "SELECT TABLE_NAME t, INDEX_NAME i, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) cols FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY' GROUP BY TABLE_NAME, INDEX_NAME",
      )) as unknown as [Row[]];
      for (const [table, schema] of Object.entries(PMACONTROL_SCHEMA)) {
        const unique = keys.filter((k) => k.t === table).map((k) => String(k.cols));
        assert.equal(unique.sort(), schema.unique.map((key) => key.join(',')).sort(), `${table} unique keys`);
      }
      // Every field the service writes has its column (a link: its table).
      for (const kept of KEPT) {
        for (const field of Object.keys(kept.resource.declaration.fields)) {
          const link = kept.table.links?.[field];
          const where = link
            ? PMACONTROL_SCHEMA[link.table]?.columns[link.target]
            : PMACONTROL_SCHEMA[kept.table.table]?.columns[field];
          assert.ok(where, `${kept.name}.${field} has a column in PmaControl`);
        }
      }
    } finally {
      await connection.end();
      await db.drop();
    }
  });

  it('latin1 and latin1_swedish_ci as MariaDB has them: every byte held and weighed the same', async () => {
    const connection = await createConnection({ uri: url });
    try {
      for (let byte = 0; byte < 256; byte++) {
        const hex = byte.toString(16).padStart(2, '0');
        const [[row]] = (await connection.query(
          `SELECT CONVERT(CONVERT(UNHEX('${hex}') USING latin1) USING utf8mb4) AS c, HEX(WEIGHT_STRING(CONVERT(UNHEX('${hex}') USING latin1) COLLATE latin1_swedish_ci)) AS w`,
        )) as unknown as [[{ c: string; w: string }]];
        assert.is(unheldCharacter(row.c, 'latin1'), undefined, `byte ${hex} is held`);
        if (byte === 0x20) continue; // a trailing space is not weighed
        assert.is(
          keyIn('latin1_swedish_ci', row.c).charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'),
          row.w,
          `byte ${hex}`,
        );
      }
      // Beyond the 256: held nowhere in latin1, and where MariaDB says so too.
      for (const character of ['東', '🚀', 'İ', 'ő', 'Ł']) {
        assert.is(unheldCharacter(character, 'latin1'), character);
        const [[row]] = (await connection.query('SELECT HEX(CONVERT(? USING latin1)) AS h', [
          character,
        ])) as unknown as [[{ h: string }]];
        assert.is(row.h, '3F', `MariaDB turns ${character} into ?`);
      }
      assert.is(unheldCharacter('a🚀', 'utf8mb3'), '🚀');
      assert.is(unheldCharacter('東京', 'utf8mb3'), undefined);
      // Pairs PmaControl's unique keys take for one, checked by MariaDB itself.
      for (const [a, b, same] of [
        ['Zürich', 'Zyrich', true],
        ['Zürich', 'Zurich', false],
        ['[x', 'Åx', true],
        ['Ö', ']', true],
        ['Ø', 'Ö', false],
        ['ABC ', 'abc', true],
      ] as const) {
        const [[row]] = (await connection.query(
          'SELECT CONVERT(? USING latin1) COLLATE latin1_swedish_ci = CONVERT(? USING latin1) COLLATE latin1_swedish_ci AS eq',
          [a, b],
        )) as unknown as [[{ eq: number }]];
        assert.is(row.eq === 1, same, `${a} = ${b} for MariaDB`);
        assert.is(keyIn('latin1_swedish_ci', a) === keyIn('latin1_swedish_ci', b), same, `${a} = ${b} here`);
      }
    } finally {
      await connection.end();
    }
  });
}

it.run();
