import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { type Received, Receiver, signatureValid, tokenKnown } from '../support/receiver.js';

/**
 * Event rules through the real process (section 15): what fires, what is sent and how it is signed,
 * retries, dead deliveries, redelivery and replay, the target policy, and who may see the rules.
 */

const RULES = '/fr/api/event-rules';

interface Running {
  service: ServiceProcess;
  dataDir: string;
  admin: Record<string, string>;
  as: (token: string) => Record<string, string>;
  token: (role: string) => Promise<string>;
}

async function start(env: Record<string, string> = {}): Promise<Running> {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', ...env });
  const token = async (role: string) => {
    const made = await runCli(['token', 'create', '--name', `${role}-${Date.now()}`, '--role', role], {
      DATA_DIR: dataDir,
    });
    return (await tokenKnown([service.url], made.stdout.trim().split('\n').pop()!)).Authorization.slice(7);
  };
  const as = (value: string) => ({ Authorization: `Bearer ${value}` });
  return { service, dataDir, admin: as(await token('admin')), as, token };
}

async function server(url: string, n: number, fields: Record<string, unknown> = {}): Promise<number> {
  const made = await send(url, 'POST', `${BASE}/servers`, {
    body: {
      id_client: 99,
      id_environment: 1,
      name: `db-${n}`,
      ip: `10.1.0.${n}`,
      login: 'l',
      passwd: `pw-${n}-secret`,
      ...fields,
    },
  });
  assert.is(made.status, 201, made.text);
  return made.body.id;
}

async function rule(running: Running, body: Record<string, unknown>): Promise<{ id: number; secret: string }> {
  const made = await send(running.service.url, 'POST', RULES, { headers: running.admin, body });
  assert.is(made.status, 201, made.text);
  return { id: made.body.id, secret: made.body.made?.target_secret ?? (body.target as { secret: string }).secret };
}

const patch = async (url: string, id: number, body: Record<string, unknown>) => {
  const reply = await send(url, 'PATCH', `${BASE}/servers/${id}`, { body });
  assert.is(reply.status, 200, reply.text);
  return reply;
};

/** Runs `check` on a started service and receivers, and stops them whatever happens. */
async function withService(
  env: Record<string, string>,
  receivers: number,
  check: (running: Running, ...receivers: Receiver[]) => Promise<void>,
): Promise<void> {
  const running = await start(env);
  const started = await Promise.all(Array.from({ length: receivers }, () => new Receiver().start()));
  try {
    await check(running, ...started);
  } finally {
    await Promise.all(started.map((receiver) => receiver.close()));
    await running.service.stop();
  }
}

const tag = async (url: string, name: string) => {
  const made = await send(url, 'POST', `${BASE}/tags`, { body: { name, color: '#000000', background: '#FFFFFF' } });
  assert.is(made.status, 201, made.text);
  return made.body.id as number;
};

const get = async (running: Running, path: string) =>
  (await send(running.service.url, 'GET', path, { headers: running.admin })).body;

/** Polls `path` until `done` holds of its body (at most 10 s). */
async function until(running: Running, path: string, done: (body: any) => boolean) {
  let body = await get(running, path);
  for (let i = 0; i < 200 && !done(body); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    body = await get(running, path);
  }
  return body;
}

/** What every delivery of the transition rule must be: signed with its secret, its id, the change, no secret. */
function checkDelivery(made: { id: number; secret: string }, got: Received): void {
  assert.ok(signatureValid(made.secret, got), 'the signature checks with the rule secret');
  assert.not.ok(signatureValid(`whsec_${Buffer.alloc(32).toString('base64')}`, got));
  assert.is(got.headers['webhook-id'], `${made.id}-${got.position}`);
  assert.match(String(got.headers['webhook-timestamp']), /^[0-9]{10}$/);
  const body = JSON.parse(got.body);
  assert.equal(body.rule, { id: made.id, name: 'monitoring-off' });
  assert.is(body.change.type, 'ServerUpdated');
  assert.equal(body.change.diff, [{ field: 'is_monitored', before: true, after: false }]);
  assert.not.ok(got.body.includes('secret'), 'no password in a delivery');
}

test('a transition rule fires on is_monitored true → false only, signed with its secret, secrets redacted', async () => {
  await withService({}, 1, async (running, receiver) => {
    const url = running.service.url;
    const id = await server(url, 1);
    const made = await rule(running, {
      name: 'monitoring-off',
      on: ['servers'],
      where: [{ field: 'is_monitored', from: true, to: false }],
      target: { url: receiver.url },
    });
    assert.match(made.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const shown = await send(url, 'GET', `${RULES}/${made.id}`, { headers: running.admin });
    assert.not.ok(shown.text.includes(made.secret.slice(6)), 'the secret is never shown again');
    assert.is(shown.body.item.has_target_secret, true);
    await patch(url, id, { is_monitored: false }); // fires
    await patch(url, id, { port: 3307, passwd: 'changed-secret' }); // still false, no transition
    await patch(url, id, { is_monitored: true });
    await patch(url, id, { is_monitored: false }); // fires again
    await patch(url, id, { display_name: 'later' });
    const other = await server(url, 2, { is_monitored: false }); // created false: no transition from true
    await patch(url, other, { is_monitored: true });
    await receiver.until((got) => got.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.is(receiver.received.length, 2, JSON.stringify(receiver.positions()));
    for (const got of receiver.received) checkDelivery(made, got);
    const deliveries = await get(running, `${RULES}/${made.id}/deliveries`);
    const shownDeliveries = (deliveries.items as { position: number; state: string; attempts: number }[]).map((d) => [
      d.position,
      d.state,
      d.attempts,
    ]);
    assert.equal(
      shownDeliveries,
      receiver.positions().map((position) => [position, 'delivered', 1]),
    );
    const status = await get(running, `${RULES}/${made.id}/status`);
    assert.is(status.this_instance, true);
    assert.is(status.lag, 0);
  });
});

test('a receiver answering 500 for a while: retried with back-off, then delivered, the next ones after it', async () => {
  await withService({}, 1, async (running, receiver) => {
    receiver.behaviour = (n) => ({ status: n < 2 ? 500 : 204 });
    const made = await rule(running, { name: 'all-tags', on: ['tags'], target: { url: receiver.url } });
    for (let i = 0; i < 3; i++) await tag(running.service.url, `t${i}`);
    await receiver.until((got) => new Set(got.map((r) => r.position)).size === 3);
    const positions = receiver.positions();
    // The first change was tried three times (500, 500, 2xx) before the second was sent.
    assert.is(positions[0], positions[1]);
    assert.is(positions[1], positions[2]);
    assert.ok(positions[3] > positions[2] && positions[4] > positions[3]);
    assert.ok(receiver.received[1].at - receiver.received[0].at >= 900, 'the first retry waits about a second');
    const ids = new Set(receiver.received.slice(0, 3).map((r) => r.headers['webhook-id']));
    assert.is(ids.size, 1, 'a retry has the same webhook-id');
    const deliveries = await get(running, `${RULES}/${made.id}/deliveries?state=delivered`);
    assert.equal(
      (deliveries.items as { attempts: number }[]).map((d) => d.attempts),
      [3, 1, 1],
    );
  });
});

test('a delivery given up is dead and the rule goes on; redeliver sends it again', async () => {
  await withService({ WEBHOOK_GIVE_UP_AFTER: '2s' }, 1, async (running, receiver) => {
    let refusing = true;
    receiver.behaviour = () => ({ status: refusing ? 503 : 204 });
    const url = running.service.url;
    const made = await rule(running, {
      name: 'tags',
      on: ['tags'],
      types: ['TagCreated'],
      target: { url: receiver.url },
    });
    const dead = await tag(url, 'a');
    const deadPosition = (await get(running, `/fr/api/changes?resource=tags&id=${dead}`)).items[0].position;
    const deadOnes = await until(running, `${RULES}/${made.id}/deliveries?state=dead`, (b) => b.items.length > 0);
    refusing = false;
    assert.equal(
      deadOnes.items.map((d: { position: number; last_status: number }) => [d.position, d.last_status]),
      [[deadPosition, 503]],
    );
    await tag(url, 'b');
    await receiver.until((got) => got.some((r) => r.position > deadPosition));
    assert.is((await get(running, `${RULES}/${made.id}/status`)).last_error, 'answered 503');
    const count = receiver.received.length;
    const again = await send(url, 'POST', `${RULES}/${made.id}/deliveries/${deadPosition}/redeliver`, {
      headers: running.admin,
    });
    assert.is(again.status, 202);
    await receiver.until((got) => got.length > count);
    assert.is(receiver.received[count].position, deadPosition);
    const redone = await until(running, `${RULES}/${made.id}/deliveries?state=delivered`, (b) =>
      b.items.some((d: { position: number }) => d.position === deadPosition),
    );
    assert.ok(redone.items.some((d: { position: number }) => d.position === deadPosition));
  });
});

test('a replay sends again every matching change from a position, those before the rule included', async () => {
  await withService({}, 1, async (running, receiver) => {
    const url = running.service.url;
    const old = await tag(url, 'old');
    const made = await rule(running, {
      name: 'tags',
      on: ['tags'],
      types: ['TagCreated'],
      target: { url: receiver.url },
    });
    const fresh = await tag(url, 'new');
    await receiver.until((got) => got.length === 1);
    const replay = await send(url, 'POST', `${RULES}/${made.id}/replay`, { headers: running.admin, body: { from: 1 } });
    assert.is(replay.status, 202);
    await receiver.until((got) => got.length >= 3);
    const replayed = receiver.received.slice(1).map((r) => JSON.parse(r.body).change);
    assert.equal(
      replayed.map((change: { id: number; type: string }) => [change.type, change.id]),
      [
        ['TagCreated', old],
        ['TagCreated', fresh],
      ],
    );
    for (const body of [{ from: 0 }, { from: 'x' }, { from: 1, to: 2 }]) {
      const bad = await send(url, 'POST', `${RULES}/${made.id}/replay`, { headers: running.admin, body });
      assert.is(bad.status, 422, JSON.stringify(body));
    }
  });
});

test('targets: an internal address given literally is refused unless allowed', async () => {
  await withService({ WEBHOOK_ALLOWED_HOSTS: '' }, 1, async (running, receiver) => {
    const targets = [
      receiver.url,
      'http://10.1.2.3/h',
      'http://169.254.169.254/latest',
      'http://[::1]:80/',
      'ftp://x.net/',
    ];
    for (const target of targets) {
      const refused = await send(running.service.url, 'POST', RULES, {
        headers: running.admin,
        body: { name: 'x', on: ['tags'], target: { url: target } },
      });
      assert.is(refused.status, 422, target);
      assert.is(refused.body.errors[0].field, 'target_url');
    }
  });
});

test('targets: a name is checked on the address it resolves to, at delivery (localhost refused then)', async () => {
  await withService({ WEBHOOK_ALLOWED_HOSTS: '' }, 1, async (running, receiver) => {
    const named = await rule(running, {
      name: 'by-name',
      on: ['tags'],
      target: { url: `http://localhost:${receiver.port}/hook` },
    });
    await tag(running.service.url, 'n');
    const status = await until(running, `${RULES}/${named.id}/status`, (b) => b.last_error !== null);
    assert.match(String(status.last_error), /localhost resolves to (127\.0\.0\.1|::1), an internal address/);
    assert.is(receiver.received.length, 0);
  });
});

test('targets: a redirect is not followed, it is a failed attempt', async () => {
  await withService({}, 2, async (running, redirecting, elsewhere) => {
    redirecting.behaviour = () => ({ status: 302, headers: { Location: elsewhere.url } });
    const made = await rule(running, { name: 'moved', on: ['tags'], target: { url: redirecting.url } });
    await tag(running.service.url, 'r');
    const status = await until(running, `${RULES}/${made.id}/status`, (b) => b.last_error !== null);
    assert.is(status.last_error, 'answered 302: redirects are not followed');
    assert.is(elsewhere.received.length, 0);
  });
});

test('targets: allowed or not, the service itself is never a target', async () => {
  await withService({ WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost' }, 0, async (running) => {
    const url = running.service.url;
    const self = await rule(running, { name: 'self', on: ['tags'], target: { url: `${url}/fr/api/import` } });
    await tag(url, 's');
    const status = await until(running, `${RULES}/${self.id}/status`, (b) => b.last_error !== null);
    assert.match(String(status.last_error), /is this service itself/);
  });
});

test('event rules are for admins: their routes, their changes in the change log', async () => {
  const running = await start({ ANONYMOUS_ROLE: 'writer' });
  try {
    const url = running.service.url;
    const made = await rule(running, { name: 'hidden', on: ['tags'], target: { url: 'https://hooks.example.net/x' } });
    const writer = running.as(await running.token('writer'));
    for (const headers of [{}, writer]) {
      assert.is((await send(url, 'GET', RULES, { headers })).status, 403);
      assert.is((await send(url, 'GET', `${RULES}/${made.id}`, { headers })).status, 403);
      assert.is((await send(url, 'GET', `${RULES}/${made.id}/deliveries`, { headers })).status, 403);
      assert.is((await send(url, 'GET', '/fr/api/changes?resource=event-rules', { headers })).status, 403);
      const changes = await send(url, 'GET', '/fr/api/changes?limit=1000', { headers });
      assert.not.ok(changes.text.includes('EventRule'), 'a writer sees no event rule change');
    }
    assert.is((await send(url, 'GET', `${BASE}/event-rules`)).status, 404);
    const mine = await send(url, 'GET', '/fr/api/changes?resource=event-rules', { headers: running.admin });
    assert.equal(
      mine.body.items.map((item: { type: string }) => item.type),
      ['EventRuleCreated'],
    );
    const exported = await send(url, 'GET', '/fr/api/export', { headers: running.admin });
    assert.not.ok('event-rules' in exported.body.resources, 'event rules are not part of the configuration');
  } finally {
    await running.service.stop();
  }
});

test('a rule is checked like any write: each problem a 422 on its field', async () => {
  await withService({}, 0, async (running) => {
    const url = running.service.url;
    const body = {
      name: 'bad',
      on: ['servers', 'nope'],
      types: ['TagCreated'],
      where: [
        { field: 'passwd', changed: true },
        { field: 'colour', eq: 1 },
        { field: 'port', from: 1, to: 1 },
      ],
      target: { url: 'https://hooks.example.net/x', secret: 'whsec_short' },
    };
    const bad = await send(url, 'POST', RULES, { headers: running.admin, body });
    assert.is(bad.status, 422);
    assert.equal(
      bad.body.errors.map((e: { field: string }) => e.field),
      ['target_secret'],
      'the key is checked first, with the body',
    );
    const { target: _key, ...rest } = body;
    const worse = await send(url, 'POST', RULES, {
      headers: running.admin,
      body: { ...rest, target: { url: 'https://hooks.example.net/x' } },
    });
    assert.is(worse.status, 422);
    assert.equal(
      worse.body.errors.map((e: { field: string }) => e.field),
      ['on[1]', 'types[0]', 'where[0].field', 'where[1].field', 'where[2]'],
    );
    assert.not.ok(bad.text.includes('whsec_short'), 'a refused key is not echoed');
  });
});

test('a rule is an entry: its history, the list at a moment, a revert; the key never shown', async () => {
  await withService({}, 0, async (running) => {
    const url = running.service.url;
    const made = await rule(running, { name: 'first', on: ['tags'], target: { url: 'https://hooks.example.net/1' } });
    const renamed = await send(url, 'PATCH', `${RULES}/${made.id}`, {
      headers: running.admin,
      body: { name: 'second' },
    });
    assert.is(renamed.status, 200);
    const history = await get(running, `${RULES}/${made.id}/history`);
    const first = history.items[0].position;
    const then = await get(running, `${RULES}?at=${first}`);
    assert.equal(
      then.items.map((r: { name: string }) => r.name),
      ['first'],
    );
    const reverted = await send(url, 'POST', `${RULES}/${made.id}/revert`, {
      headers: running.admin,
      body: { version: 1 },
    });
    assert.is(reverted.status, 200, reverted.text);
    assert.is((await get(running, `${RULES}/${made.id}`)).item.name, 'first');
    assert.not.ok(JSON.stringify(history).includes(made.secret.slice(6)), 'the key is [redacted] in the history');
    assert.is((await send(url, 'GET', `${RULES}/${made.id}/secret`, { headers: running.admin })).status, 404);
  });
});

test('a slow receiver holds its own rule only: writes and another rule go on meanwhile', async () => {
  await withService({}, 2, async (running, slow, quick) => {
    slow.behaviour = () => ({ status: 204, delayMs: 10_000 });
    await rule(running, { name: 'slow', on: ['tags'], target: { url: slow.url } });
    await rule(running, { name: 'quick', on: ['tags'], target: { url: quick.url } });
    for (let i = 0; i < 20; i++) await tag(running.service.url, `q${i}`);
    await quick.until((got) => got.length === 20);
    assert.is(slow.received.length, 1, 'the slow receiver still holds its first delivery');
  });
});

test.run();
