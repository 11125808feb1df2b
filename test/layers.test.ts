import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

/**
 * The layers of src/ as ARCHITECTURE.md draws them, read from the import statements themselves: the
 * engine knows nothing above it, the rules build no code and start no thread, nothing imports in a
 * circle, and a long file says why at its top.
 */

const ROOT = normalize(join(import.meta.dirname, '..'));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

const FILES = [...sources('src'), ...sources('projections')];
const text = new Map(FILES.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]));

/** Every module a file imports or re-exports (type-only ones included), as paths from the root, or `node:…`. */
function importsOf(file: string): string[] {
  const found: string[] = [];
  for (const match of text.get(file)!.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm)) {
    const target = match[1];
    if (target.startsWith('.')) found.push(normalize(join(dirname(file), target)).replace(/\.js$/, '.ts'));
    else found.push(target);
  }
  for (const match of text.get(file)!.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) found.push(match[1]);
  return found;
}

const under = (dir: string) => (file: string) => file.startsWith(`${dir}/`);

test('src/engine imports nothing but itself and Node', () => {
  for (const file of FILES.filter(under('src/engine'))) {
    for (const target of importsOf(file)) {
      const fine = target.startsWith('node:') || under('src/engine')(target);
      assert.ok(fine, `${file} imports ${target}: the engine knows no resource, rule or adapter`);
    }
  }
});

test('the domain imports no layer but itself and the engine', () => {
  for (const file of FILES.filter(under('src/domain'))) {
    for (const target of importsOf(file)) {
      const local = target.startsWith('src/') || target.startsWith('projections/');
      const fine = !local || under('src/domain')(target) || under('src/engine')(target);
      assert.ok(fine, `${file} imports ${target}`);
    }
  }
});

test('no rule file builds code, starts a thread or waits on shared memory', () => {
  for (const file of FILES.filter(under('src/domain'))) {
    const source = text.get(file)!;
    for (const banned of ['new Function', 'worker_threads', 'Atomics', 'SharedArrayBuffer', 'eval(', 'Math.imul']) {
      assert.not.ok(source.includes(banned), `${file} uses ${banned}: speed machinery belongs in src/engine/`);
    }
  }
});

test('code is generated in one place', () => {
  const generating = FILES.filter((file) => text.get(file)!.includes('new Function'));
  assert.equal(generating, ['src/engine/codegen.ts']);
});

test('no import cycle in src/', () => {
  const graph = new Map(FILES.map((file) => [file, importsOf(file).filter((target) => text.has(target))]));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file)!) visit(target);
    path.pop();
    state.set(file, 'done');
  };
  for (const file of FILES) visit(file);
  assert.equal(cycles, [], `import cycles:\n${cycles.join('\n')}`);
});

test('a file over 300 lines says why at its top', () => {
  for (const file of FILES) {
    const lines = text.get(file)!.split('\n');
    if (lines.length <= 300) continue;
    assert.match(
      lines[0],
      /^\/\/ Over 300 lines: \S/,
      `${file} has ${lines.length} lines and no reason on its first line`,
    );
  }
});

test.run();
