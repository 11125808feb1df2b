import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiDocument } from '../../src/main.js';
import { startHarness } from '../support/harness.js';
import { ROOT } from '../support/process.js';

const it = suite('a client generated from the OpenAPI document with default options compiles and calls the service');
/** The tools' package.json and lock file, kept with the tests. */
const SPEC = join(ROOT, 'test/generated-client');
/** Where they are installed and the client is built: under node_modules, outside the test tree. */
const HOME = join(ROOT, 'node_modules/.cache/pmacontrol-generated-client');

/** The README's minimal server creation (an input alias included), through a generated, typed client. */
const CLIENT = `declare const process: { argv: string[] };
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const client = createClient<paths>({ baseUrl: process.argv[2] });
const { data, error } = await client.POST('/fr/api/config/servers', {
  body: {
    id_client: 99, id_environment: 1, name: 'db-paris-01',
    ip: '10.0.0.21', login: 'pmacontrol', passwd: 's3cret', ssl: 1,
  },
});
if (error || !data) throw new Error('refused: ' + JSON.stringify(error));
// 202: an approval policy held the creation, or it was staged in a change set (nothing applied yet).
if ('approval' in data) throw new Error('held for approval ' + data.approval.id);
if ('change_set' in data) throw new Error('staged in change set ' + data.change_set);
const id: number = data.id;
const name: string = data.item.name;
const ssl: boolean = data.item.is_ssl;
console.log(JSON.stringify({ id, name, ssl, has_passwd: data.item.has_passwd }));
`;

const TSCONFIG = {
  compilerOptions: {
    ...{ target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
    ...{ skipLibCheck: false, outDir: 'out', types: [] },
  },
  files: ['client.ts'],
};

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000 });
  assert.is(result.status, 0, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** openapi-typescript, openapi-fetch and TypeScript 5, from test/generated-client's own lock file. */
function installTools() {
  const lock = readFileSync(join(SPEC, 'package-lock.json'), 'utf8');
  // Written once `npm ci` succeeded: an install that stopped half-way is made again.
  const done = join(HOME, 'installed-from.lock');
  if (existsSync(done) && readFileSync(done, 'utf8') === lock) return;
  mkdirSync(HOME, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(SPEC, file), join(HOME, file));
  console.log('  installing test/generated-client (openapi-typescript, openapi-fetch, typescript 5)');
  run('npm', ['ci', '--no-audit', '--no-fund'], HOME);
  writeFileSync(done, lock);
}

it('openapi-typescript → openapi-fetch client → tsc (strict) → a real POST answered 201', async () => {
  installTools();
  const work = mkdtempSync(join(HOME, 'work-'));
  const h = await startHarness();
  try {
    writeFileSync(join(work, 'openapi.json'), JSON.stringify(apiDocument('test')));
    run(join(HOME, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '-o', 'schema.d.ts'], work);
    writeFileSync(join(work, 'client.ts'), CLIENT);
    writeFileSync(join(work, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    run(join(HOME, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], work);
    assert.ok(readFileSync(join(work, 'schema.d.ts'), 'utf8').includes('"/fr/api/config/servers"'));
    // Not spawnSync: the service answering it runs in this process.
    const called = await promisify(execFile)(process.execPath, [join(work, 'out/client.js'), h.url], {
      timeout: 30_000,
    });
    const answer = JSON.parse(called.stdout);
    assert.equal(answer, { id: 1, name: 'db-paris-01', ssl: true, has_passwd: true });
  } finally {
    await h.close();
    rmSync(work, { recursive: true, force: true });
  }
});

it.run();
