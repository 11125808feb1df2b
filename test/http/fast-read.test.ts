import { createServer, type IncomingMessage, type RequestListener, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AccessSettings } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';
import { withFastReads } from '../../src/http/fast-read.js';
import { hostCheck } from '../../src/http/hosts.js';
import { Metrics } from '../../src/http/operations.js';
import { apiDocument } from '../../src/main.js';
import { collectingLogger, type Harness, startHarness } from '../support/harness.js';

/**
 * The fast read path (src/http/fast-read.ts) against the Koa app it stands in front of, over one
 * service: every request below goes to both, and the answers must be the same byte for byte
 * (status, headers in order, body; `Date` aside, and a generated request id in form only), with
 * the same access-log line and the same metrics. Each case also says whether the fast path must
 * answer it or hand it to Koa, so that a fast path that never answers (or answers too much) fails.
 */

const ADMIN = { actor: 'test-setup', requestId: 'setup' };
const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Side {
  url: string;
  server: Server;
  logs: string[];
  metrics: Metrics;
}

interface World {
  h: Harness;
  fast: Side & { handedToKoa: { count: number } };
  koa: Side;
  ids: { server: number; deleted: number; tag: number; goneTag: number };
  reader: string;
}

async function listen(handler: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function world(access: AccessSettings): Promise<World> {
  const h = await startHarness({ access });
  const { service } = h;
  const openapi = apiDocument('test');
  const side = () => ({ logs: [] as string[], metrics: new Metrics('test') });
  const [f, k] = [side(), side()];
  const koaApp = (s: typeof f) =>
    createApp({ service, logger: collectingLogger(s.logs), metrics: s.metrics, openapi, access });
  const fastKoa = koaApp(f).callback();
  const handedToKoa = { count: 0 };
  const fastDeps = {
    service,
    logger: collectingLogger(f.logs),
    metrics: f.metrics,
    access,
    hosts: hostCheck('127.0.0.1'),
  };
  const fast = withFastReads(fastDeps, (req, res) => {
    handedToKoa.count++;
    return fastKoa(req, res);
  });
  const fastSide = { ...f, ...(await listen(fast)), handedToKoa };
  const koaSide = { ...k, ...(await listen(koaApp(k).callback())) };

  const { ids, reader } = await seed(service);
  return { h, fast: fastSide, koa: koaSide, ids, reader };
}

/** Servers (one soft-deleted), tags (one deleted) and a reader's token. */
async function seed(service: Harness['service']) {
  const server = (name: string, ip: string) =>
    service.write.execute(
      {
        kind: 'create',
        resource: 'servers',
        input: { id_client: 99, id_environment: 1, name, ip, login: 'pma', passwd: 'pw', tags: [] },
      },
      ADMIN,
    );
  const kept = await server('db-é-01', '10.0.0.1');
  await service.write.execute({ kind: 'patch', resource: 'servers', id: kept.id, input: { port: 3307 } }, ADMIN);
  const deleted = await server('db-02', '10.0.0.2');
  await service.write.execute({ kind: 'delete', resource: 'servers', id: deleted.id }, ADMIN);
  const tag = (name: string) =>
    service.write.execute(
      { kind: 'create', resource: 'tags', input: { name, color: '#000000', background: '#FFFFFF' } },
      ADMIN,
    );
  const keptTag = await tag('prod');
  const goneTag = await tag('old');
  await service.write.execute({ kind: 'delete', resource: 'tags', id: goneTag.id }, ADMIN);
  const { token: reader } = await service.write.issueToken(
    { name: 'alice', role: 'reader', secrets: false, expiresAt: null },
    ADMIN,
  );
  return { ids: { server: kept.id, deleted: deleted.id, tag: keptTag.id, goneTag: goneTag.id }, reader };
}

interface Raw {
  status: number;
  headers: [string, string][];
  body: string;
}

function get(url: string, method: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        resolve({ status: res.statusCode!, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** An access-log line with what differs from one request to the next left out. */
const comparable = (line: string, idGiven: boolean) => {
  const { time: _t, ms: _m, request_id, ...rest } = JSON.parse(line);
  return { ...rest, ...(idGiven ? { request_id } : {}) };
};

type Case = { path: string; method?: string; headers?: Record<string, string>; fast: boolean };

/** Sends one request to both sides and compares everything; returns the fast side's answer. */
async function both(w: World, c: Case): Promise<Raw> {
  const headers = c.headers ?? {};
  const before = w.fast.handedToKoa.count;
  const [logsF, logsK] = [w.fast.logs.length, w.koa.logs.length];
  const a = await get(w.fast.url + c.path, c.method ?? 'GET', headers);
  const b = await get(w.koa.url + c.path, c.method ?? 'GET', headers);
  const label = `${c.method ?? 'GET'} ${c.path} ${JSON.stringify(headers)}`;
  assert.is(
    w.fast.handedToKoa.count - before,
    c.fast ? 0 : 1,
    `${label}: answered by ${c.fast ? 'Koa' : 'the fast path'}`,
  );
  assert.is(a.status, b.status, label);
  assert.is(a.body, b.body, label);
  const sentId = headers['X-Request-ID'];
  const idGiven = sentId !== undefined && a.headers.some(([n, v]) => n === 'X-Request-ID' && v === sentId);
  const shown = (r: Raw) =>
    r.headers
      .filter(([name]) => name !== 'Date')
      .map(([name, value]) =>
        name === 'X-Request-ID' && !idGiven ? [name, UUID7.test(value) ? 'generated' : value] : [name, value],
      );
  assert.equal(shown(a), shown(b), label);
  assert.is(w.fast.logs.length - logsF, 1, `${label}: one access-log line`);
  assert.is(w.koa.logs.length - logsK, 1, label);
  assert.equal(comparable(w.fast.logs.at(-1)!, idGiven), comparable(w.koa.logs.at(-1)!, idGiven), label);
  return a;
}

async function sameMetrics(w: World) {
  const counts = async (m: Metrics) => {
    const text = `${await m.registry.getSingleMetricAsString('pmacontrol_http_requests_total')}\n${await m.registry.getSingleMetricAsString('pmacontrol_http_request_duration_seconds')}`;
    return text.split('\n').filter((l) => /_total\{|_count\{/.test(l));
  };
  const [a, b] = [await counts(w.fast.metrics), await counts(w.koa.metrics)];
  assert.ok(
    a.some((l) => l.includes('route="/fr/api/config/servers/:id"') && l.includes('status="200"')),
    a.join('\n'),
  );
  assert.equal(a, b);
}

async function close(w: World) {
  for (const side of [w.fast, w.koa]) {
    side.server.closeAllConnections();
    await new Promise<void>((resolve) => side.server.close(() => resolve()));
  }
  await w.h.close();
}

const it = suite('the fast read path answers as the Koa route does');

it('anonymous writer (the default): plain reads are fast, every other request goes to Koa, answers identical', async () => {
  const w = await world({ anonymousRole: 'writer', corsOrigins: [] });
  try {
    const { server, deleted, tag, goneTag } = w.ids;
    const B = '/fr/api/config';
    const fastOnes: Case[] = [
      { path: `${B}/servers/${server}`, fast: true },
      { path: `${B}/servers/${deleted}`, fast: true }, // soft-deleted: still shown, is_deleted true
      { path: `${B}/tags/${tag}`, fast: true },
      { path: `${B}/clients/99`, fast: true },
      { path: `${B}/environments/1`, fast: true },
      { path: `${B}/servers/${server}`, headers: { 'X-Request-ID': 'deploy-42' }, fast: true },
      { path: `${B}/servers/${server}`, headers: { 'X-Request-ID': 'not a sane id' }, fast: true },
      { path: `${B}/servers/${server}`, headers: { Authorization: `Bearer ${w.reader}` }, fast: true },
      { path: `${B}/servers/${server}`, headers: { Origin: 'https://elsewhere.example' }, fast: true },
    ];
    const koaOnes: Case[] = [
      { path: `${B}/tags/${goneTag}`, fast: false }, // 410
      { path: `${B}/tags/999999`, fast: false }, // 404
      { path: `${B}/tags/0`, fast: false }, // 400
      { path: `${B}/tags/007`, fast: false },
      { path: `${B}/tags/9007199254740993`, fast: false },
      { path: `${B}/nope/1`, fast: false },
      { path: `${B}/servers/${server}/`, fast: false },
      { path: `${B}/servers/${server}?at=1`, fast: false },
      { path: `${B}/servers/${server}?color=1`, fast: false },
      { path: `${B}/servers/${server}`, headers: { 'If-None-Match': '"2"' }, fast: false }, // 304
      { path: `${B}/servers/${server}`, headers: { 'If-None-Match': '"1"' }, fast: false },
      { path: `${B}/servers/${server}`, headers: { Authorization: 'Bearer pmc_tooshort' }, fast: false },
      { path: `${B}/servers/${server}`, headers: { Authorization: 'Basic YTpi' }, fast: false },
      { path: `${B}/servers/${server}`, method: 'HEAD', fast: false },
      { path: `${B}/servers/${server}/history`, fast: false },
      { path: `${B}/servers`, fast: false },
    ];
    for (const c of [...fastOnes, ...koaOnes]) await both(w, c);
    const plain = await both(w, fastOnes[0]);
    assert.is(plain.status, 200);
    assert.is(JSON.parse(plain.body).item.name, 'db-é-01');
    assert.ok(plain.headers.some(([n, v]) => n === 'ETag' && v === '"2"'));
    await sameMetrics(w);
  } finally {
    await close(w);
  }
});

it('no anonymous access: a token that may read is fast, no token goes to Koa (401)', async () => {
  const w = await world({ anonymousRole: 'none', corsOrigins: [] });
  try {
    const path = `/fr/api/config/servers/${w.ids.server}`;
    await both(w, { path, headers: { Authorization: `Bearer ${w.reader}` }, fast: true });
    const refused = await both(w, { path, fast: false });
    assert.is(refused.status, 401);
    await sameMetrics(w);
  } finally {
    await close(w);
  }
});

it('with CORS origins configured, every request goes to Koa (it answers Vary: Origin)', async () => {
  const w = await world({ anonymousRole: 'writer', corsOrigins: ['https://ui.example'] });
  try {
    const path = `/fr/api/config/servers/${w.ids.server}`;
    await both(w, { path, fast: false });
    await both(w, { path, headers: { Origin: 'https://ui.example' }, fast: false });
  } finally {
    await close(w);
  }
});

it.run();
