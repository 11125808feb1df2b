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

test.run();
