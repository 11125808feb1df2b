import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { test } from 'uvu';

/**
 * The MariaDB the tests use: MARIADB_TEST_URL, else the machine's server on 127.0.0.1:3306 (root,
 * no password, database `test`). Undefined when it does not answer, unless MARIADB_REQUIRED is set
 * (as `.ci/run` does): then a missing server is a failure, not a skip.
 */
export async function mariadbUrl(): Promise<string | undefined> {
  const url = process.env.MARIADB_TEST_URL ?? 'mysql://root@127.0.0.1:3306/test';
  try {
    const connection = await createConnection({ uri: url, connectTimeout: 2000 });
    await connection.end();
    return url;
  } catch (error) {
    if (process.env.MARIADB_REQUIRED) throw new Error(`MARIADB_REQUIRED is set but ${url} does not answer: ${error}`);
    return undefined;
  }
}

/** A visible skip, as for EventStoreDB. */
export function skipWithoutMariadb(name: string): void {
  console.log(
    `\n  SKIPPED: ${name} — no MariaDB answers on MARIADB_TEST_URL or 127.0.0.1:3306 (start it, or set MARIADB_TEST_URL).\n`,
  );
  test.skip(`${name} (no MariaDB reachable)`, () => {});
  test.run();
}

/** A database of its own on the server at `url`, dropped by `drop()`: tests never share one. */
export async function freshDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `pmacontrol_test_${randomBytes(6).toString('hex')}`;
  const admin = await createConnection({ uri: url });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    async drop() {
      const connection = await createConnection({ uri: url });
      await connection.query(`DROP DATABASE IF EXISTS ${name}`);
      await connection.end();
    },
  };
}

/**
 * A MariaDB server of the test's own (never the machine's shared one): `mariadb-install-db` into a
 * temporary datadir, `mariadbd` on its own port and socket. `stop()` and `start()` take it down and
 * bring it back on the same data; `close()` stops it for good.
 */
export class PrivateMariadb {
  readonly dir = mkdtempSync(join(tmpdir(), 'pmacontrol-mariadb-'));
  private child?: ChildProcess;

  private constructor(readonly port: number) {}

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/pmacontrol`;
  }

  static async create(): Promise<PrivateMariadb> {
    const server = new PrivateMariadb(await freePort());
    execFileSync('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${join(server.dir, 'data')}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ]);
    await server.start();
    const connection = await createConnection({ host: '127.0.0.1', port: server.port, user: 'root' });
    await connection.query('CREATE DATABASE pmacontrol');
    await connection.end();
    return server;
  }

  async start(): Promise<void> {
    this.child = spawn(
      'mariadbd',
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--port=${this.port}`,
        `--socket=${join(this.dir, 'mariadb.sock')}`,
        '--bind-address=127.0.0.1',
        '--user=root',
        '--skip-log-bin',
        '--innodb-flush-log-at-trx-commit=1',
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 200; i++) {
      try {
        const connection = await createConnection({ host: '127.0.0.1', port: this.port, user: 'root' });
        await connection.end();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`the private MariaDB on port ${this.port} did not start`);
  }

  /** Stops the server (SIGTERM, or SIGKILL: no shutdown at all) and waits for its exit. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    // Ended already, by itself or by a signal (its exit code then null): no 'exit' is coming.
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  /** SIGSTOP: the server keeps its sockets and answers nothing, as a frozen VM or a stalled disk would. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  async close(): Promise<void> {
    this.thaw();
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Whether this machine can run a private server (Debian's mariadb-server installed). */
export function canRunPrivateMariadb(): boolean {
  try {
    execFileSync('mariadbd', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
