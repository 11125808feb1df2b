import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hostCheck, hostName } from '../../src/http/hosts.js';
import { BASE } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';

const it = suite('Host: 421 for names the service does not answer to (DNS rebinding)');

/** A request with a Host header of the test's choosing (fetch sets its own). */
function sendWithHost(
  url: string,
  method: string,
  path: string,
  host: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { Host: host };
  if (payload) headers['Content-Type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

it('hostName reads a name with or without a port, IPv6 in brackets; refuses anything else', () => {
  assert.is(hostName('Config.Example.net:8080'), 'config.example.net');
  assert.is(hostName('[::1]:8080'), '::1');
  assert.is(hostName('127.0.0.1'), '127.0.0.1');
  assert.is(hostName('a b'), undefined);
  assert.is(hostName('evil.example/x'), undefined);
});

it('the defaults, a wildcard listener, and ALLOWED_HOSTS patterns', () => {
  const loopback = hostCheck('127.0.0.1');
  for (const host of ['127.0.0.1:8080', 'localhost:8080', '[::1]:8080', 'LOCALHOST', undefined])
    assert.ok(loopback(host), String(host));
  for (const host of ['attacker.example:8080', '10.0.0.5:8080', 'localhost.attacker.example', 'x y'])
    assert.not.ok(loopback(host), host);
  const everywhere = hostCheck('0.0.0.0', ['*.example.net', 'config.internal']);
  for (const host of ['10.0.0.5:8080', '[2001:db8::1]:80', 'a.example.net', 'b.a.example.net:443', 'config.internal'])
    assert.ok(everywhere(host), host);
  for (const host of ['example.net', 'example.net.attacker.example', 'attacker.example', 'config.internal.evil'])
    assert.not.ok(everywhere(host), host);
  assert.ok(hostCheck('10.1.2.3')('10.1.2.3:8080'), 'its own listen address');
  assert.not.ok(hostCheck('10.1.2.3')('10.1.2.4:8080'), 'not another address');
});

it('the real process: a rebinding page gets 421 for a write, a read, a plain read and /healthz', async () => {
  const service = await spawnService({ DATA_DIR: tempDir(), ALLOWED_HOSTS: '*.example.net' });
  try {
    const tag = { name: 'rebound', color: '#000000', background: '#FFFFFF' };
    const evil = 'attacker.example';
    const write = await sendWithHost(service.url, 'POST', `${BASE}/tags`, evil, tag);
    assert.equal([write.status, write.body.code], [421, 'misdirected_request']);
    assert.is((await sendWithHost(service.url, 'GET', `${BASE}/tags`, evil)).status, 421);
    assert.is((await sendWithHost(service.url, 'GET', `${BASE}/environments/1`, evil)).status, 421, 'plain read');
    assert.is((await sendWithHost(service.url, 'GET', '/healthz', evil)).status, 421);
    const port = new URL(service.url).port;
    const made = await sendWithHost(service.url, 'POST', `${BASE}/tags`, `localhost:${port}`, tag);
    assert.is(made.status, 201);
    const allowed = await sendWithHost(service.url, 'GET', `${BASE}/tags/${made.body.id}`, 'config.example.net');
    assert.is(allowed.status, 200, 'a name ALLOWED_HOSTS lists');
    const tags = await sendWithHost(service.url, 'GET', `${BASE}/tags`, `127.0.0.1:${port}`);
    assert.is(tags.body.total, 1, 'the refused write recorded nothing');
  } finally {
    await service.stop();
  }
});

it.run();
