import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { phpAvailable, pmacontrolDecrypt, writeCryptConfig } from '../support/php.js';
import { CLI_ARGS, ROOT, runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';

/**
 * The fixture is the file PmaControl's generateMySQLConfig() writes for the rows below (its header,
 * a section per server, two empty lines after each), every name and value double-quoted and the
 * sections between this service's two comment lines, each password ciphertext shown as
 * `{the password}`; the soft-deleted server, which PmaControl's generator keeps, is left out.
 */
const FIXTURE = readFileSync(join(ROOT, 'test/fixtures/db.config.ini.php'), 'utf8');
const php = phpAvailable();
const it = suite("pmacontrol-ini: PmaControl's connection file, as its generator writes it");

const SERVERS = [
  { name: 'db-paris-01', ip: '10.0.0.21', login: 'pmacontrol', passwd: 'Paris-01-pw' },
  {
    name: 'db-lyon-01',
    ip: '10.0.1.21',
    port: 3307,
    login: 'monitor',
    passwd: 'Lyon pässword',
    database: 'pmacontrol',
  },
  { name: 'db-old', ip: '10.0.9.9', login: 'pmacontrol', passwd: 'Old-pw' },
  { name: 'db-paris-02', ip: 'db-paris-02.example.net', login: 'pmacontrol', passwd: 'Paris-02-pw' },
];

async function fleet(service: ServiceProcess) {
  for (const server of SERVERS) {
    const made = await send(service.url, 'POST', `${BASE}/servers`, {
      body: { id_client: 99, id_environment: 1, ...server },
    });
    assert.is(made.status, 201, made.text);
  }
  assert.is((await send(service.url, 'DELETE', `${BASE}/servers/3`)).status, 200);
}

/** The file with each password ciphertext opened by PHP, as `{password}`. */
function opened(text: string, cryptConfig: string): string {
  const ciphertexts = [...text.matchAll(/^password="(.*)"$/gm)].map((m) => m[1]!);
  const plain = pmacontrolDecrypt(cryptConfig, ciphertexts);
  let i = 0;
  return text.replace(/^password=.*$/gm, () => `password="{${plain[i++]}}"`);
}

function watching(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  return { child, exited: new Promise((resolve) => child.once('exit', resolve)) };
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), what);
};

(php ? it : it.skip)('the file equals what PmaControl writes for the same rows, soft-deleted left out', async () => {
  const dir = tempDir();
  const cryptConfig = writeCryptConfig(dir);
  const env = { DATA_DIR: join(dir, 'data'), PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
  const service = await spawnService(env);
  try {
    await fleet(service);
    const out = join(dir, 'db.config.ini.php');
    const run = await runCli(['pmacontrol-ini', '--out', out], env);
    assert.is(run.code, 0, run.stderr);
    const text = readFileSync(out, 'utf8');
    assert.is(opened(text, cryptConfig), FIXTURE);
    assert.not.match(text, 'Old-pw');
    assert.equal(
      readdirSync(dir).filter((f) => f.includes('.tmp')),
      [],
      'no temporary file left',
    );
    const before = statSync(out);
    const again = await runCli(['pmacontrol-ini', '--out', out], env);
    assert.is(again.code, 0);
    assert.match(again.stderr, 'unchanged');
    const after = statSync(out);
    assert.equal([after.mtimeMs, after.ino], [before.mtimeMs, before.ino], 'not written again: nothing changed');
    assert.is(readFileSync(out, 'utf8'), text, 'the same ciphertexts');
  } finally {
    await service.stop();
  }
});

(php ? it : it.skip)(
  '--watch: written again after each change that affects it; a restart writes nothing new',
  async () => {
    const dir = tempDir();
    const cryptConfig = writeCryptConfig(dir);
    const env = { DATA_DIR: join(dir, 'data'), PMACONTROL_CRYPT_KEY_FILE: cryptConfig, POLL_INTERVAL_MS: '50' };
    const service = await spawnService(env);
    const out = join(dir, 'db.config.ini.php');
    const read = () => {
      try {
        return readFileSync(out, 'utf8');
      } catch {
        return '';
      }
    };
    try {
      const watch = watching(['pmacontrol-ini', '--out', out, '--watch'], env);
      await until(() => read().startsWith(';[name_of_connection]'), 'the first write');
      await fleet(service);
      await until(() => read().includes('["db-paris-02"]') && !read().includes('["db-old"]'), 'the servers written');
      const patched = await send(service.url, 'PATCH', `${BASE}/servers/1`, {
        body: { passwd: 'Changed-pw', port: 3310 },
      });
      assert.is(patched.status, 200);
      await until(() => read().includes('port="3310"'), 'the change written');
      assert.match(opened(read(), cryptConfig), 'password="{Changed-pw}"');
      watch.child.kill('SIGTERM');
      assert.is(await watch.exited, 0);

      const written = statSync(out).mtimeMs;
      const restarted = watching(['pmacontrol-ini', '--out', out, '--watch'], env);
      await new Promise((r) => setTimeout(r, 3000));
      assert.is(statSync(out).mtimeMs, written, 'a restart on an unchanged configuration writes nothing');
      await send(service.url, 'DELETE', `${BASE}/servers/2`);
      await until(() => !read().includes('["db-lyon-01"]'), 'a soft delete takes the server out');
      restarted.child.kill('SIGTERM');
      assert.is(await restarted.exited, 0);
    } finally {
      await service.stop();
    }
  },
);

/** What PHP's own parse_ini_file($file, true) reads from the file, as JSON. */
function parsedByPhp(file: string): Record<string, Record<string, string>> {
  const run = spawnSync('php', ['-r', 'echo json_encode(parse_ini_file($argv[1], true));', file]);
  assert.is(run.status, 0, run.stderr.toString());
  return JSON.parse(run.stdout.toString());
}

/** Names and logins that break an INI file written naively, and a server named to read as another one's section. */
const HOSTILE = [
  { name: 'quote"s', login: 'mon\nhostname=evil.example' },
  { name: "it's; a comment", login: 'semi;colon' },
  // biome-ignore lint/suspicious/noTemplateCurlyInString: PHP's ${...} interpolation, which must stay text
  { name: '${HOME}', login: '$x ${PATH}' },
  { name: 'back\\slash]x', login: 'a"b' },
  { name: '[pmacontrol]', login: '=x' },
].map((server, i) => ({ ...server, ip: `10.8.0.${i + 1}`, passwd: `pw-${i}` }));

(php ? it : it.skip)(
  "PHP's own parse_ini_file reads every hostile name and value back exactly; other sections kept",
  async () => {
    const dir = tempDir();
    const cryptConfig = writeCryptConfig(dir);
    const env = { DATA_DIR: join(dir, 'data'), PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
    const service = await spawnService(env);
    try {
      for (const server of HOSTILE) {
        const made = await send(service.url, 'POST', `${BASE}/servers`, {
          body: { id_client: 99, id_environment: 1, ...server },
        });
        assert.is(made.status, 201, made.text);
      }
      const out = join(dir, 'db.config.ini.php');
      // The installer's own connection, as it writes it, and a line PmaControl's generator wrote before.
      writeFileSync(
        out,
        '[pmacontrol]\ndriver=mysql\nhostname=localhost\nuser=pmacontrol\npassword=x\ncrypted=1\ndatabase=pmacontrol\n',
      );
      const run = await runCli(['pmacontrol-ini', '--out', out], env);
      assert.is(run.code, 0, run.stderr);
      const read = parsedByPhp(out);
      assert.equal(Object.keys(read), ['pmacontrol', ...HOSTILE.map((server) => server.name)]);
      assert.equal(read.pmacontrol!.hostname, 'localhost', "the installer's section kept");
      for (const server of HOSTILE) {
        const section = read[server.name]!;
        assert.equal([section.hostname, section.user, section.crypted], [server.ip, server.login, '1'], server.name);
        assert.equal(pmacontrolDecrypt(cryptConfig, [section.password!]), [server.passwd]);
      }
      // A server named as the installer's section would take its place: refused, the file left as it is.
      const before = readFileSync(out, 'utf8');
      const clash = await send(service.url, 'POST', `${BASE}/servers`, {
        body: { id_client: 99, id_environment: 1, name: 'pmacontrol', ip: '10.8.1.1', login: 'x', passwd: 'y' },
      });
      assert.is(clash.status, 201);
      const refused = await runCli(['pmacontrol-ini', '--out', out], env);
      assert.equal([refused.code, refused.stderr.includes('named "pmacontrol"')], [1, true], refused.stderr);
      assert.is(readFileSync(out, 'utf8'), before);
    } finally {
      await service.stop();
    }
  },
);

it('the file is made exclusively beside its target: a symbolic link updates its target; modes and owner', async () => {
  const dir = tempDir();
  const cryptConfig = writeCryptConfig(dir);
  const env = { DATA_DIR: join(dir, 'data'), PMACONTROL_CRYPT_KEY_FILE: cryptConfig };
  const service = await spawnService(env);
  try {
    const fresh = join(dir, 'new.ini.php');
    assert.is((await runCli(['pmacontrol-ini', '--out', fresh], env)).code, 0);
    assert.is(statSync(fresh).mode & 0o777, 0o640, 'a new file: 0640');
    const other = join(dir, 'other.ini.php');
    assert.is((await runCli(['pmacontrol-ini', '--out', other, '--mode', '0600'], env)).code, 0);
    assert.is(statSync(other).mode & 0o777, 0o600, '--mode');

    // A link to the real file, elsewhere: the target is replaced, the link stays a link.
    const real = join(tempDir(), 'db.config.ini.php');
    writeFileSync(real, '[pmacontrol]\nhostname=localhost\n', { mode: 0o604 });
    if (process.getuid?.() === 0) chownSync(real, 65534, 65534);
    const link = join(dir, 'db.config.ini.php');
    symlinkSync(real, link);
    await send(service.url, 'POST', `${BASE}/servers`, {
      body: { id_client: 99, id_environment: 1, name: 'db1', ip: '10.9.0.1', login: 'm', passwd: 'p' },
    });
    const run = await runCli(['pmacontrol-ini', '--out', link], env);
    assert.is(run.code, 0, run.stderr);
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link');
    const replaced = statSync(real);
    assert.match(readFileSync(real, 'utf8'), '["db1"]');
    assert.is(replaced.mode & 0o777, 0o604, 'a replaced file keeps its mode');
    if (process.getuid?.() === 0) assert.equal([replaced.uid, replaced.gid], [65534, 65534], 'and its owner');
    assert.equal(
      readdirSync(dirname(real)).filter((f) => f.includes('.tmp')),
      [],
      'no temporary file left',
    );
  } finally {
    await service.stop();
  }
});

it('refused without an output file or a PmaControl key', async () => {
  const env = { DATA_DIR: tempDir() };
  const noOut = await runCli(['pmacontrol-ini'], env);
  assert.equal([noOut.code, noOut.stderr.includes('--out FILE')], [2, true], noOut.stderr);
  const noKey = await runCli(['pmacontrol-ini', '--out', join(tempDir(), 'x')], env);
  assert.match(noKey.stderr, "PmaControl's key");
});

it.run();
