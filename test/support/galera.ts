import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { freePort } from './mariadb.js';

export const GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so';

/** Whether this machine can run a private Galera cluster: Debian's galera-4, mariadb-server and rsync. */
export function galeraAvailable(): boolean {
  if (!existsSync(GALERA_PROVIDER)) return false;
  try {
    execFileSync('rsync', ['--version'], { stdio: 'ignore' });
    execFileSync('mariadbd', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Ports {
  sql: number;
  group: number;
  sst: number;
  ist: number;
}

/**
 * One node of the test's own cluster: mariadbd as the `mysql` user on 127.0.0.1, its datadir in a
 * temporary directory, group communication, state transfer (rsync) and IST on ports of its own.
 * Timeouts are shortened so that a lost node is noticed in a few seconds.
 */
class Node {
  child?: ChildProcess;
  /** The end of what mariadbd wrote on stderr (its error log), for the message when it dies. */
  private log = '';

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly ports: Ports,
    private readonly cluster: () => string,
  ) {}

  get url(): string {
    return `mysql://root@127.0.0.1:${this.ports.sql}/pmacontrol`;
  }

  /** Starts mariadbd; `bootstrap` makes this node a new cluster of its own (the first one only). */
  async start(bootstrap = false): Promise<void> {
    const options = [
      `gmcast.listen_addr=tcp://127.0.0.1:${this.ports.group}`,
      `ist.recv_addr=127.0.0.1:${this.ports.ist}`,
      'evs.suspect_timeout=PT3S',
      'evs.inactive_timeout=PT6S',
      'evs.keepalive_period=PT0.5S',
      'evs.inactive_check_period=PT0.5S',
      'evs.install_timeout=PT6S',
      'pc.wait_prim_timeout=PT10S',
    ].join(';');
    const args = [
      '--no-defaults',
      `--datadir=${join(this.dir, 'data')}`,
      `--port=${this.ports.sql}`,
      `--socket=${join(this.dir, 'mariadb.sock')}`,
      `--pid-file=${join(this.dir, 'mariadb.pid')}`,
      '--bind-address=127.0.0.1',
      '--user=mysql',
      '--binlog-format=ROW',
      '--innodb-autoinc-lock-mode=2',
      '--innodb-flush-log-at-trx-commit=1',
      '--wsrep-on=ON',
      `--wsrep-provider=${GALERA_PROVIDER}`,
      '--wsrep-cluster-name=pmacontrol-test',
      `--wsrep-cluster-address=${this.cluster()}`,
      `--wsrep-node-name=${this.name}`,
      `--wsrep-node-address=127.0.0.1:${this.ports.group}`,
      `--wsrep-sst-receive-address=127.0.0.1:${this.ports.sst}`,
      '--wsrep-sst-method=rsync',
      `--wsrep-provider-options=${options}`,
      ...(bootstrap ? ['--wsrep-new-cluster'] : []),
    ];
    this.log = '';
    this.child = spawn('mariadbd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-3000);
    });
    await this.until(async () => (await this.status()).ready === 'ON', `${this.name} to join and be ready`, 120);
  }

  /** wsrep_ready and the cluster's size as this node sees it (undefined while it does not answer). */
  async status(): Promise<{ ready?: string; size?: number; primary?: string }> {
    try {
      const connection = await createConnection({ host: '127.0.0.1', port: this.ports.sql, user: 'root' });
      try {
        const [rows] = (await connection.query(
          "SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_size', 'wsrep_cluster_status')",
        )) as unknown as [{ Variable_name: string; Value: string }[]];
        const of = (name: string) => rows.find((row) => row.Variable_name === name)?.Value;
        return {
          ready: of('wsrep_ready'),
          size: Number(of('wsrep_cluster_size')),
          primary: of('wsrep_cluster_status'),
        };
      } finally {
        await connection.end();
      }
    } catch {
      return {};
    }
  }

  async until(check: () => Promise<boolean>, what: string, seconds = 60): Promise<void> {
    for (let i = 0; i < seconds * 4; i++) {
      if (await check()) return;
      if (this.exited) {
        const how = this.child!.exitCode ?? this.child!.signalCode;
        throw new Error(`${this.name} exited (${how}) waiting for ${what}; its log ends:\n${this.log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /**
   * Starts a node that joins the cluster being formed. One that dies while joining (its state
   * transfer given up on a loaded machine) is started again, twice at most, and says so: forming
   * the test's cluster is not what the tests look at.
   */
  async join(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.start();
      } catch (error) {
        if (attempt >= 3 || !this.exited) throw error;
        console.error(`\n  ${(error as Error).message}\n  starting ${this.name} again`);
      }
    }
  }

  /** The node's process has ended, by itself or by a signal (whose exit code is then null). */
  get exited(): boolean {
    return this.child !== undefined && (this.child.exitCode !== null || this.child.signalCode !== null);
  }

  /** SIGKILL: the node is gone at once, as in a crash; `start()` brings it back (IST or SST). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || this.exited) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || this.exited) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
  }

  /** Cuts this node off the cluster's group communication (it loses quorum), or lets it back. */
  async isolate(isolated: boolean): Promise<void> {
    const connection = await createConnection({ host: '127.0.0.1', port: this.ports.sql, user: 'root' });
    try {
      await connection.query(`SET GLOBAL wsrep_provider_options = 'gmcast.isolate=${isolated ? 1 : 0}'`);
    } finally {
      await connection.end();
    }
  }
}

/** A 3-node MariaDB Galera cluster of the test's own on 127.0.0.1, with a database `pmacontrol`. */
export class GaleraCluster {
  private constructor(
    readonly dir: string,
    readonly nodes: Node[],
  ) {}

  static async create(size = 3): Promise<GaleraCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'pmacontrol-galera-'));
    chmodSync(dir, 0o755);
    const ports: Ports[] = [];
    for (let i = 0; i < size; i++)
      ports.push({ sql: await freePort(), group: await freePort(), sst: await freePort(), ist: await freePort() });
    const address = `gcomm://${ports.map((p) => `127.0.0.1:${p.group}`).join(',')}`;
    const nodes = ports.map((p, i) => new Node(`node${i + 1}`, join(dir, `node${i + 1}`), p, () => address));
    for (const node of nodes) {
      execFileSync('mariadb-install-db', [
        '--no-defaults',
        `--datadir=${join(node.dir, 'data')}`,
        '--user=mysql',
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
      ]);
      execFileSync('chown', ['-R', 'mysql:mysql', node.dir]);
    }
    const cluster = new GaleraCluster(dir, nodes);
    try {
      await nodes[0].start(true);
      const connection = await createConnection({ host: '127.0.0.1', port: nodes[0].ports.sql, user: 'root' });
      await connection.query('CREATE DATABASE pmacontrol');
      await connection.end();
      for (const node of nodes.slice(1)) await node.join();
      await nodes[0].until(async () => (await nodes[0].status()).size === size, 'every node in the cluster');
    } catch (error) {
      await cluster.close();
      throw error;
    }
    return cluster;
  }

  async close(): Promise<void> {
    for (const node of this.nodes) await node.stop().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}
