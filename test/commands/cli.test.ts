import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HELPS as COMMANDS } from '../../src/commands/index.js';
import { freshDatabase, mariadbUrl } from '../support/mariadb.js';
import { ROOT, runCli, servedDataDir, spawnService, tempDir } from '../support/process.js';

const it = suite('the CLI never creates or touches the wrong store; every command has --help; --version');

const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

it('--version, --help, and <command> --help for every command: exit 0, nothing started or created', async () => {
  const v = await runCli(['--version'], {});
  assert.equal([v.code, v.stdout.trim()], [0, version]);
  const all = await runCli(['--help'], {});
  assert.is(all.code, 0);
  for (const command of COMMANDS) assert.ok(all.stdout.includes(`  ${command.name} `), command.name);
  const dataDir = join(tempDir(), 'never-made');
  for (const command of COMMANDS) {
    const help = await runCli([command.name, '--help'], { DATA_DIR: dataDir, PORT: '0' });
    assert.is(help.code, 0, `${command.name} --help: ${help.stderr}`);
    assert.match(help.stdout, new RegExp(`^usage: pmacontrol-config ${command.name}`));
    assert.not.match(help.stdout, /listening/);
  }
  assert.not.ok(existsSync(dataDir), '--help created nothing');
});

it('docs/cli.md shows what --help prints, for the binary and for every command', async () => {
  const page = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
  const shown = new Map(
    [...page.matchAll(/```text\n\$ (pmacontrol-config [^\n]*)\n([\s\S]*?)\n```/g)].map((m) => [m[1], m[2]]),
  );
  const all = await runCli(['--help'], {});
  assert.fixture(shown.get('pmacontrol-config --help') ?? '(missing)', all.stdout.trimEnd());
  for (const command of COMMANDS) {
    const help = await runCli([command.name, '--help'], {});
    const line = `pmacontrol-config ${command.name} --help`;
    assert.fixture(shown.get(line) ?? `(missing: ${line})`, help.stdout.trimEnd());
  }
});

it('a DATA_DIR that does not exist, or holds no store, is refused by every command: nothing written there', async () => {
  const missing = join(tempDir(), 'typo');
  const empty = tempDir();
  const runs: [string, string[]][] = [
    ['token create', ['token', 'create', '--name', 'x', '--role', 'admin']],
    ['export', ['export']],
    ['import --dry-run', ['import', join(ROOT, 'package.json'), '--dry-run']],
    ['rotate-key', ['rotate-key', '--new-key', 'a'.repeat(64)]],
    ['replay', ['replay']],
    ['copy-log', ['copy-log', '--to', `sqlite:${join(tempDir(), 'copy.sqlite')}`]],
  ];
  for (const [what, args] of runs) {
    const onMissing = await runCli(args, { DATA_DIR: missing });
    assert.is(onMissing.code, 1, `${what}: ${onMissing.stdout}${onMissing.stderr}`);
    assert.match(onMissing.stderr, /does not exist/);
    assert.equal(onMissing.stdout, '', `${what} printed nothing else (no token, no document)`);
    const onEmpty = await runCli(args, { DATA_DIR: empty });
    assert.is(onEmpty.code, 1, what);
    assert.match(onEmpty.stderr, /holds no store/);
  }
  assert.not.ok(existsSync(missing));
  assert.equal(readdirSync(empty), [], 'no log, key or read models made');
});

it('a DATA_DIR that serves another store is refused, naming EVENT_STORE', async () => {
  const url = await mariadbUrl();
  const sqliteDir = await servedDataDir();
  const onMariadb = { EVENT_STORE: 'mariadb', MARIADB_URL: url ?? 'mysql://root@127.0.0.1:3306/test' };
  const token = await runCli(['token', 'create', '--name', 'x', '--role', 'admin'], {
    ...onMariadb,
    DATA_DIR: sqliteDir,
  });
  assert.is(token.code, 1);
  assert.match(token.stderr, /serves the embedded SQLite store, but EVENT_STORE=mariadb/);
  assert.not.match(token.stdout, /pmc_/, 'no token printed');
  if (!url) return;
  const database = await freshDatabase(url);
  try {
    const served = await servedDataDir({ EVENT_STORE: 'mariadb', MARIADB_URL: database.url });
    const exported = await runCli(['export'], { DATA_DIR: served });
    assert.is(exported.code, 1, 'EVENT_STORE left out: the SQLite store is not what this directory serves');
    const name = new URL(database.url).pathname.slice(1);
    assert.match(exported.stderr, new RegExp(`serves mariadb at 127\\.0\\.0\\.1:3306/${name}, but EVENT_STORE=sqlite`));
  } finally {
    await database.drop();
  }
});

it('replay --apply beside an instance leaves the rebuilt file for it; once it stopped, replaces in place', async () => {
  const dataDir = await servedDataDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  const rebuilt = join(dataDir, 'read-models.sqlite.rebuilt');
  try {
    const beside = await runCli(['replay', '--apply'], { DATA_DIR: dataDir });
    assert.is(beside.code, 0, beside.stderr);
    assert.match(beside.stdout, /an instance is serving this DATA_DIR: it takes the rebuilt read models in/);
    assert.ok(existsSync(rebuilt));
    const compared = await runCli(['replay'], { DATA_DIR: dataDir });
    assert.is(compared.code, 0, 'a replay that only compares may run beside it');
  } finally {
    await service.stop();
  }
  const applied = await runCli(['replay', '--apply'], { DATA_DIR: dataDir });
  assert.is(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /read models match the log/);
  assert.not.ok(existsSync(rebuilt), 'taken in when the stored read models were opened');
});

it.run();
