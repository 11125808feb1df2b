import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

/**
 * The documents describe what is: every link between them leads to a page that exists, none leads
 * outside the repository, and every file of the repository they name (`src/…`, `test/…`, `bench/…`)
 * is there.
 */

const ROOT = normalize(join(import.meta.dirname, '..'));
const PAGES = [
  'README.md',
  'ARCHITECTURE.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Every .ts file under `dir`, as paths from the root. */
const sourceFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(`${dir}/${entry.name}`)
      : entry.name.endsWith('.ts')
        ? [`${dir}/${entry.name}`]
        : [],
  );

test('links lead to pages of the repository that exist', () => {
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      assert.not.match(target, /^[a-z]+:/, `${page} links outside the repository: ${target}`);
      const path = normalize(join(dirname(page), target.split('#')[0]));
      assert.ok(existsSync(join(ROOT, path)), `${page} links to ${target}, which does not exist`);
    }
  }
});

test('every file of the repository a page names exists', () => {
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const [, path] of text.matchAll(
      /`((?:src|test|bench|projections|docs)\/[A-Za-z0-9_./<>-]+\.(?:ts|md|mjs|sql))`/g,
    )) {
      if (path.includes('<')) continue; // a pattern: src/domain/<resource>/resource.ts
      assert.ok(existsSync(join(ROOT, path)), `${page} names ${path}, which does not exist`);
    }
  }
});

test('every environment variable is read in src/config.ts alone, and docs/configuration.md lists each one', () => {
  const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
  const read = new Set([...config.matchAll(/env(?:\.|, ')([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]));
  const page = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
  const listed = new Set([...page.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
  assert.equal([...read].sort(), [...listed].sort(), 'the variables config.ts reads are the rows of the page');
  // The SQLite driver sets one for the driver to read (src/sqlite/driver.ts): it reads none.
  const elsewhere = sourceFiles('src').filter(
    (file) =>
      !['src/config.ts', 'src/sqlite/driver.ts'].includes(file) &&
      /process\.env\b/.test(readFileSync(join(ROOT, file), 'utf8')),
  );
  assert.equal(elsewhere, [], 'no other source file reads the environment');
});

test.run();
