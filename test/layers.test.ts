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

/** The core's folders and files; every other folder under src/ is a wing (a feature: src/pmacontrol/, src/log/ …). */
const CORE = [
  'application',
  'commands',
  'domain',
  'engine',
  'event-store',
  'http',
  'openapi',
  'read-models',
  'schemas',
  'sqlite',
];
const wingOf = (file: string): string | undefined => {
  const match = /^src\/([^/]+)\//.exec(file);
  return match && !CORE.includes(match[1]) ? match[1] : undefined;
};
const WINGS = [...new Set(FILES.map(wingOf).filter((wing): wing is string => wing !== undefined))];

/** What a wing may import of the core: the plug points, the application's facade and write catalogue, the rules. */
const PLUG_POINTS = [
  'src/config.ts',
  'src/application/service.ts',
  'src/application/writes.ts',
  'src/http/route-module.ts',
  'src/openapi/operation-kit.ts',
  'src/commands/command.ts',
  'src/sqlite/driver.ts',
];
const local = (target: string) => target.startsWith('src/') || target.startsWith('projections/');

test('the wings are found: pmacontrol and log at least', () => {
  for (const wing of ['pmacontrol', 'log']) assert.ok(WINGS.includes(wing), `src/${wing}/ is a wing`);
});

test('only main.ts and the commands import a wing; the core names no feature', () => {
  for (const file of FILES) {
    if (wingOf(file) || file === 'src/main.ts' || under('src/commands')(file)) continue;
    for (const target of importsOf(file)) {
      const wing = wingOf(target);
      assert.not.ok(wing, `${file} imports ${target}: only main.ts and src/commands/ plug the wings in`);
    }
  }
});

test('a wing reaches the core only through the plug points, the facade, the write catalogue and the rules', () => {
  for (const file of FILES.filter((f) => wingOf(f))) {
    const own = wingOf(file)!;
    for (const target of importsOf(file).filter(local)) {
      const fine =
        wingOf(target) === own ||
        under('src/domain')(target) ||
        under('src/engine')(target) ||
        PLUG_POINTS.includes(target);
      assert.ok(fine, `${file} imports ${target}: a wing uses ${PLUG_POINTS.join(', ')}, src/domain/ and src/engine/`);
    }
  }
});

test('src/application/ holds no feature: nothing named after PmaControl, the push, the verifiable log or Ansible', () => {
  for (const file of FILES.filter(under('src/application'))) {
    const name = file.slice('src/application/'.length);
    assert.not.match(name, /^(pmacontrol-|push|verif|log-key|ansible-)/, `${file} belongs in its wing`);
  }
});

test('the schemas import only the rules and the engine', () => {
  for (const file of FILES.filter(under('src/schemas'))) {
    for (const target of importsOf(file).filter(local)) {
      const fine = under('src/schemas')(target) || under('src/domain')(target) || under('src/engine')(target);
      assert.ok(fine, `${file} imports ${target}: the schemas are derived from the declarations alone`);
    }
  }
});

test('the OpenAPI builder reads of HTTP only the route descriptors, the route modules, access and problem names', () => {
  const allowed = [
    'src/http/routes/descriptors.ts',
    'src/http/route-module.ts',
    'src/http/identity.ts',
    'src/http/errors.ts',
  ];
  for (const file of FILES.filter(under('src/openapi'))) {
    for (const target of importsOf(file).filter(under('src/http'))) {
      assert.ok(allowed.includes(target), `${file} imports ${target}`);
    }
  }
});

/** The adapters of the ports: the event stores', the read models', and a wing's (PmaControl's database). */
const ADAPTERS = [
  'src/event-store/sqlite/',
  'src/event-store/mariadb/',
  'src/event-store/esdb/',
  'src/event-store/in-memory/',
  'src/read-models/sqlite/',
  'src/pmacontrol/mariadb-tables.ts',
];
const adapterOf = (file: string) => ADAPTERS.find((adapter) => file === adapter || file.startsWith(adapter));

test('nothing but the composition root (main.ts, stores.ts) imports an adapter', () => {
  for (const file of FILES) {
    if (file === 'src/main.ts' || file === 'src/stores.ts') continue;
    for (const target of importsOf(file)) {
      const adapter = adapterOf(target);
      if (!adapter || adapterOf(file) === adapter) continue;
      const sameFamily = adapter.startsWith('src/event-store/') && under('src/event-store')(file);
      assert.ok(sameFamily, `${file} imports the adapter ${target}: main.ts and stores.ts pick the adapters`);
    }
  }
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
