import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { ROOT } from '../support/process.js';

// No Docker engine runs here: this checks the compose file's structure as far as that can be done without one.
const it = suite('docker-compose.yml: a 3-node KurrentDB cluster and two service instances');
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<
    string,
    {
      image?: string;
      build?: { context: string; dockerfile: string };
      environment: Record<string, string>;
      ports?: string[];
      depends_on?: Record<string, unknown>;
      networks: unknown;
      volumes?: string[];
      profiles?: string[];
    }
  >;
  volumes: Record<string, unknown>;
};
const nodes = Object.entries(compose.services).filter(([name]) => name.startsWith('kurrentdb-'));
const instances = Object.entries(compose.services).filter(
  ([name, service]) => name.startsWith('config-') && !service.profiles,
);
const onMariadb = Object.entries(compose.services).filter(([, service]) => service.profiles?.includes('mariadb'));
const ipOf = (env: Record<string, string>) => env.KURRENTDB_REPLICATION_IP;

it('three KurrentDB nodes, each seeded with the two others, with a data volume', () => {
  assert.is(nodes.length, 3);
  for (const [name, node] of nodes) {
    assert.match(node.image ?? '', /kurrentdb:\d+/, name);
    assert.is(node.environment.KURRENTDB_CLUSTER_SIZE, '3');
    const others = nodes
      .filter(([n]) => n !== name)
      .map(([, o]) => `${ipOf(o.environment)}:2113`)
      .sort();
    assert.equal(node.environment.KURRENTDB_GOSSIP_SEED.split(',').sort(), others);
    assert.ok(node.volumes?.some((v) => v.endsWith(':/var/lib/kurrentdb')));
  }
});

it('two service instances built from the repository Dockerfile, on the cluster, with one shared secret key', () => {
  assert.is(instances.length, 2);
  const ports = new Set<string>();
  for (const [name, instance] of instances) {
    assert.ok(
      instance.build && existsSync(join(ROOT, instance.build.context, instance.build.dockerfile)),
      `${name} Dockerfile`,
    );
    assert.is(instance.environment.EVENT_STORE, 'eventstoredb');
    assert.is(instance.environment.HOST, '0.0.0.0');
    for (const [, node] of nodes)
      assert.ok(instance.environment.EVENTSTORE_CONNECTION_STRING.includes(`${ipOf(node.environment)}:2113`));
    assert.match(instance.environment.CONFIG_SECRET_KEY, /^\$\{CONFIG_SECRET_KEY:\?/);
    assert.match(instance.environment.CONFIG_LOG_SIGNING_KEY, /^\$\{CONFIG_LOG_SIGNING_KEY:\?/);
    assert.equal(Object.keys(instance.depends_on ?? {}).sort(), nodes.map(([n]) => n).sort());
    ports.add(instance.ports![0]);
  }
  assert.is(ports.size, 2);
});

it('the instances environment is accepted by the service configuration', () => {
  const [, instance] = instances[0];
  const config = loadConfig({ ...instance.environment, CONFIG_SECRET_KEY: 'ab'.repeat(32) });
  assert.is(config.eventStore, 'eventstoredb');
  assert.throws(() => loadConfig({ ...instance.environment, CONFIG_SECRET_KEY: '' }), /CONFIG_SECRET_KEY/);
});

it('the mariadb profile: one MariaDB with a volume, two instances on it with the shared key', () => {
  assert.equal(onMariadb.map(([name]) => name).sort(), ['config-m1', 'config-m2', 'mariadb']);
  const [, database] = onMariadb.find(([name]) => name === 'mariadb')!;
  assert.match(database.image ?? '', /^mariadb:10\.11/);
  assert.ok(database.volumes?.some((v) => v.endsWith(':/var/lib/mysql')));
  for (const [name, instance] of onMariadb.filter(([n]) => n !== 'mariadb')) {
    const env: Record<string, string> = { ...instance.environment, MARIADB_ROOT_PASSWORD: 'x' };
    const url = env.MARIADB_URL.replace(/\$\{MARIADB_ROOT_PASSWORD[^}]*\}/, 'x');
    const config = loadConfig({ ...env, MARIADB_URL: url, CONFIG_SECRET_KEY: 'ab'.repeat(32) });
    assert.is(config.eventStore, 'mariadb', name);
    assert.is(config.mariadb?.url, 'mysql://root:x@mariadb:3306/pmacontrol');
    assert.equal(Object.keys(instance.depends_on ?? {}), ['mariadb']);
  }
});

it('the Dockerfile: two stages, the compiled build, a non-root user, a health check, an LTS base', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  assert.is(stages.length, 2, 'a build stage and a runtime stage');
  for (const base of stages) assert.match(base, /^node:(22|24)-/, 'a current Node LTS');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  for (const line of [
    'COPY --from=build /app/dist ./dist',
    'COPY --from=build /app/node_modules ./node_modules',
    'USER node',
    'HEALTHCHECK',
    "fetch('http://127.0.0.1:8080/healthz')",
    'CMD ["node", "dist/src/cli.js", "serve"]',
  ])
    assert.ok(runtime.includes(line), line);
  assert.not.ok(runtime.includes('tsx'), 'no TypeScript at run time');
  assert.match(dockerfile, /npm ci && npm prune --omit=dev/);
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
  for (const kept of ['!src/', '!projections/', '!package-lock.json']) assert.ok(ignored.includes(kept), kept);
  assert.ok(ignored.includes('*'), 'everything else stays out (data, node_modules, .git)');
});

it.run();
