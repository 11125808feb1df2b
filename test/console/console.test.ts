import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ARGS, accessible, CHROMIUM, SHOTS } from '../support/browser.js';
import { BASE, send } from '../support/harness.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

const it = suite('the audit console at /fr/console/, in Debian chromium: every view, through the public API only');

interface World {
  service: ServiceProcess;
  browser: Browser;
  admin: string;
  reader: string;
  /** Every URL the pages asked for. */
  /** Every request a page made, beside the origin it was served from. */
  requested: { url: string; origin: string }[];
}

async function token(env: Record<string, string>, name: string, role: string) {
  const issued = await runCli(['token', 'create', '--name', name, '--role', role], env);
  assert.is(issued.code, 0, issued.stderr);
  return issued.stdout.trim().split('\n').pop()!;
}

async function signIn(page: Page, url: string, value: string) {
  await page.goto(`${url}/fr/console/`);
  await page.getByRole('textbox', { name: 'Token' }).fill(value);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Changes' }).waitFor();
}

const authed = (value: string) => ({ Authorization: `Bearer ${value}` });

async function seed(world: World) {
  const headers = authed(world.admin);
  const post = (path: string, body: unknown) => send(world.service.url, 'POST', `${BASE}/${path}`, { body, headers });
  await post('tags', { name: 'galera', color: '#FFFFFF', background: '#000000' });
  const server = await post('servers', {
    id_client: 99,
    id_environment: 1,
    name: 'db-paris-01',
    ip: '10.0.0.21',
    login: 'monitor',
    passwd: 'First-Secret-Password',
  });
  assert.is(server.status, 201, server.text);
  const patch = (body: unknown) =>
    send(world.service.url, 'PATCH', `${BASE}/servers/${server.body.id}`, { body, headers });
  assert.is((await patch({ login: 'changed' })).status, 200);
  assert.is((await patch({ passwd: 'Second-Secret-Password' })).status, 200);
}

let world: World;
const browserAvailable = toolAvailable(CHROMIUM, ['--version'], 'BROWSER_REQUIRED', 'the audit console in a browser');
const test = browserAvailable ? it : it.skip;

it.before(async () => {
  if (!browserAvailable) return;
  const env = { DATA_DIR: tempDir(), ANONYMOUS_ROLE: 'none' };
  await (await spawnService(env)).stop();
  const admin = await token(env, 'auditor', 'admin');
  const reader = await token(env, 'reader', 'reader');
  const service = await spawnService(env);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  world = { service, browser, admin, reader, requested: [] };
  await seed(world);
});

it.after(async () => {
  if (!world) return;
  await world.browser.close();
  await world.service.stop();
  const elsewhere = world.requested
    .filter(({ url, origin }) => !url.startsWith(origin) && !url.startsWith('blob:'))
    .map(({ url }) => url);
  assert.equal(elsewhere, [], 'no request leaves the origin');
  console.log(`  console screenshots: ${SHOTS}`);
});

/** A page of its own; every request it makes must stay on `origin` (checked when the suite ends). */
async function page(viewport = { width: 1280, height: 800 }, origin = world.service.url): Promise<Page> {
  const context = await world.browser.newContext({ viewport, acceptDownloads: true });
  const made = await context.newPage();
  made.on('request', (request) => world.requested.push({ url: request.url(), origin }));
  made.on('pageerror', (error) => assert.unreachable(`the page threw: ${error.message}`));
  return made;
}

test('the sign-in page: accessible; an unknown token is refused and asked again', async () => {
  const p = await page();
  await p.goto(`${world.service.url}/fr/console/changes`);
  await p.getByRole('textbox', { name: 'Token' }).waitFor();
  await accessible(p, 'sign-in');
  await p.getByRole('textbox', { name: 'Token' }).fill(`pmc_${'A'.repeat(43)}`);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByText('the token is unknown').first().waitFor();
  assert.is(await p.evaluate(() => sessionStorage.length), 0, 'a refused token is not kept');
  const csp = (await p.request.get(`${world.service.url}/fr/console/`)).headers()['content-security-policy'];
  assert.match(csp ?? '', "default-src 'self'");
});

test('on the default start (anonymous a writer): sign in with a token of your own, then out again', async () => {
  const env = { DATA_DIR: tempDir() };
  await (await spawnService(env)).stop();
  const admin = await token(env, 'dba-admin', 'admin');
  const service = await spawnService(env);
  try {
    const p = await page(undefined, service.url);
    await p.goto(`${service.url}/fr/console/changes`);
    await p.getByRole('heading', { name: 'Changes' }).waitFor();
    const who = p.locator('header .who');
    await who.getByText('(writer)').waitFor();
    await p.getByRole('button', { name: 'Sign in' }).click();
    await accessible(p, 'sign-in-by-choice');
    await p.getByRole('button', { name: 'Cancel' }).click();
    await p.getByRole('heading', { name: 'Changes' }).waitFor();
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('textbox', { name: 'Token' }).fill(admin);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await who.getByText('dba-admin (admin)').waitFor();
    await p.getByRole('heading', { name: 'Changes' }).waitFor();
    await p.getByRole('button', { name: 'Sign out' }).click();
    await who.getByText('(writer)').waitFor();
    await p.getByRole('heading', { name: 'Changes' }).waitFor();
    assert.is(await p.evaluate(() => sessionStorage.length), 0, 'the token is forgotten on sign-out');
    await p.context().close();
  } finally {
    await service.stop();
  }
});

test('sign in; the changes, newest first, with diffs; a password only as [redacted]', async () => {
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  await p.getByText('auditor (admin)').waitFor();
  const rows = p.locator('table.changes tbody tr');
  await rows.first().waitFor();
  assert.match((await rows.first().textContent()) ?? '', 'ServerUpdated');
  const login = p.locator('tr', { hasText: 'login' }).first();
  assert.match((await login.locator('del').textContent()) ?? '', 'monitor');
  assert.match((await login.locator('ins').textContent()) ?? '', 'changed');
  const content = await p.content();
  assert.match(content, '[redacted]');
  assert.not.match(content, 'Secret-Password', 'no password anywhere in the page');
  await accessible(p, 'changes');
});

test('filters live in the URL and survive a reload; CSV download of the current filter', async () => {
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  await p.locator('table.changes tbody tr').first().waitFor();
  await p.getByLabel('Resource').selectOption('tags');
  await p.getByLabel('Actor').fill('nobody-yet');
  // A change arrives live while the filters are being chosen: the view draws again, the choice stays.
  const made = await send(world.service.url, 'POST', `${BASE}/tags`, {
    body: { name: 'while-choosing', color: '#FFFFFF', background: '#000000' },
    headers: authed(world.admin),
  });
  assert.is(made.status, 201);
  await p.locator('tr.fresh', { hasText: 'TagCreated' }).first().waitFor();
  assert.is(await p.getByLabel('Resource').inputValue(), 'tags');
  await p.getByLabel('Actor').fill('');
  await p.getByRole('button', { name: 'Apply filters' }).click();
  await p.waitForFunction(() => location.search.includes('resource=tags'));
  await p.reload();
  await p.locator('table.changes tbody tr').first().waitFor();
  assert.is(await p.getByLabel('Resource').inputValue(), 'tags');
  const types = await p.locator('table.changes tbody tr td:nth-child(3)').allTextContents();
  assert.equal([...new Set(types)], ['TagCreated']);
  const [download] = await Promise.all([
    p.waitForEvent('download'),
    p.getByRole('button', { name: 'Download CSV' }).click(),
  ]);
  const csv = readFileSync((await download.path())!, 'utf8');
  assert.match(csv, /^position,at,actor,request_id,type,resource,id,field,before,after/);
  assert.match(csv, 'galera');
  assert.not.match(csv, 'db-paris-01', 'the filter applies to the download');
});

test('a change made through the API appears live, marked as new', async () => {
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  await p.locator('table.changes tbody tr').first().waitFor();
  await p.getByText('Live: new changes appear at the top.').waitFor();
  const made = await send(world.service.url, 'POST', `${BASE}/tags`, {
    body: { name: 'live-tag', color: '#FFFFFF', background: '#000000' },
    headers: authed(world.admin),
  });
  assert.is(made.status, 201);
  const fresh = p.locator('tr.fresh', { hasText: 'TagCreated' });
  await fresh.waitFor({ timeout: 10_000 });
  assert.match((await fresh.textContent()) ?? '', 'New');
});

test('an entry: its history, an older version, and a revert for a writer', async () => {
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  await p.goto(`${world.service.url}/fr/console/servers/1`);
  await p.getByRole('heading', { name: 'History' }).waitFor();
  await p.getByText('Version 3 of 3').waitFor();
  await p.goto(`${world.service.url}/fr/console/servers/1?version=1`);
  await p.getByRole('heading', { name: 'As it was then' }).waitFor();
  await p.locator('table.entry td', { hasText: '"monitor"' }).waitFor();
  await accessible(p, 'entry');
  await p.getByRole('button', { name: 'Revert to version 1' }).click();
  await p.getByRole('button', { name: 'Confirm revert' }).click();
  await p.getByText('ServerReverted').first().waitFor();
  // The page then shows the entry's new current version, not the version it was on.
  await p.getByText('Reverted to version 1: this is now its current version.').waitFor();
  await p.getByRole('heading', { name: 'Now' }).waitFor();
  await p.getByText('Version 4 of 4').waitFor();
  assert.is(new URL(p.url()).search, '', 'the address names the current version');
  const now = await send(world.service.url, 'GET', `${BASE}/servers/1`, { headers: authed(world.admin) });
  assert.equal([now.body.item.login, now.body.item.version], ['monitor', 4]);
});

test('a reader sees the history without a revert button', async () => {
  const p = await page();
  await signIn(p, world.service.url, world.reader);
  await p.goto(`${world.service.url}/fr/console/servers/1`);
  await p.getByRole('heading', { name: 'History' }).waitFor();
  await p.locator('.history li').first().waitFor();
  assert.is(await p.getByRole('button', { name: /Revert/ }).count(), 0);
});

test('the inventory at a past moment, and the differences between two moments', async () => {
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  const changes = await send(world.service.url, 'GET', '/fr/api/changes?limit=1000', { headers: authed(world.admin) });
  const created = changes.body.items.find((c: { type: string }) => c.type === 'ServerCreated');
  const at = new Date(Date.parse(created.at) + 1).toISOString();
  // Reverted to version 1 above, the server is as it was then (its password the same): changed here.
  const moved = await send(world.service.url, 'PATCH', `${BASE}/servers/1`, {
    body: { port: 3307 },
    headers: authed(world.admin),
  });
  assert.is(moved.status, 200);
  await p.goto(`${world.service.url}/fr/console/at?at=${encodeURIComponent(at)}&from=${encodeURIComponent(at)}`);
  await p.getByRole('heading', { name: 'servers (1)' }).waitFor();
  await p.getByText('db-paris-01').first().waitFor();
  await p.getByRole('heading', { name: 'Differences' }).waitFor();
  await p.locator('.differences', { hasText: 'servers/1' }).waitFor();
  await accessible(p, 'at');
});

test('the log: the checkpoint verified in the browser, and a change shown to be in it', async () => {
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  await p.goto(`${world.service.url}/fr/console/log?position=3`);
  await p.getByText("signed by the log's key: verified here").waitFor();
  await p.getByText('Verified here: change 3 is in the log').waitFor();
  await accessible(p, 'log');
});

/** The latest checkpoint's text, once the log holds more than `than` events. */
async function checkpointPast(than: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const note = (await send(world.service.url, 'GET', '/fr/api/log/checkpoint', { headers: authed(world.admin) }))
      .text;
    if (Number(note.split('\n')[1]) > than) return note;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the checkpoint did not pass ${than} events`);
}

test('the log only grew since a checkpoint kept: pasted or loaded, verified; a forged checkpoint or proof is not', async () => {
  const kept = await checkpointPast(0);
  const size = Number(kept.split('\n')[1]);
  const grown = await send(world.service.url, 'POST', `${BASE}/tags`, {
    body: { name: 'grown', color: '#FFFFFF', background: '#000000' },
    headers: authed(world.admin),
  });
  assert.is(grown.status, 201);
  const latest = Number((await checkpointPast(size)).split('\n')[1]);
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  await p.goto(`${world.service.url}/fr/console/log`);
  const pasted = p.getByRole('textbox', { name: 'A checkpoint you kept (paste it)' });
  const check = async (text: string, expected: string) => {
    await pasted.fill(text);
    await p.getByRole('button', { name: 'Check that it only grew' }).click();
    await p.getByText(expected).waitFor();
  };
  await check(kept, `Verified here: the log only grew, from the ${size} events of the checkpoint you kept`);
  await accessible(p, 'log-consistency');
  // Its root changed: the signature no longer holds, whatever a proof would say.
  const lines = kept.split('\n');
  lines[2] = Buffer.alloc(32, 7).toString('base64');
  await check(lines.join('\n'), "Not verified: the checkpoint you gave is not signed by this log's key.");
  // The service's proof altered on its way: the browser's own hashing finds it.
  await p.route('**/fr/api/log/proof/consistency**', async (route) => {
    const reply = await route.fetch();
    const proof = await reply.json();
    proof.hashes[0] = `${proof.hashes[0].startsWith('0') ? '1' : '0'}${proof.hashes[0].slice(1)}`;
    await route.fulfill({ response: reply, json: proof });
  });
  await check(kept, 'Not verified: the consistency proof does not lead from your checkpoint');
  await p.unroute('**/fr/api/log/proof/consistency**');
  await pasted.fill('');
  await p.getByLabel('or load it from a file').setInputFiles({
    name: 'checkpoint.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from(kept),
  });
  await p.getByRole('button', { name: 'Check that it only grew' }).click();
  await p.getByText(`to the ${latest} of the latest`).first().waitFor();
});

test('names where ids stand for entries: in a diff, as they were then; a deleted entry by its last name', async () => {
  const headers = authed(world.admin);
  const moved = await send(world.service.url, 'PATCH', `${BASE}/servers/1`, { body: { id_environment: 2 }, headers });
  assert.is(moved.status, 200, moved.text);
  const made = await send(world.service.url, 'POST', `${BASE}/tags`, {
    body: { name: 'legacy-dc', color: '#FFFFFF', background: '#000000' },
    headers,
  });
  const gone = await send(world.service.url, 'DELETE', `${BASE}/tags/${made.body.id}`, { headers });
  assert.is(gone.status, 200, gone.text);
  // Renamed afterwards: the diff shows the name the environment had then.
  const renamed = await send(world.service.url, 'PATCH', `${BASE}/environments/2`, {
    body: { libelle: 'Staging' },
    headers,
  });
  assert.is(renamed.status, 200, renamed.text);
  const p = await page();
  await signIn(p, world.service.url, world.admin);
  const row = p.locator('table.changes tbody tr', { hasText: 'id_environment' }).first();
  await row.getByRole('link', { name: '1 (Production)' }).waitFor();
  const then = row.getByRole('link', { name: '2 (Preprod)' });
  await then.waitFor();
  const position = Number(await row.getAttribute('data-position'));
  assert.is(await then.getAttribute('href'), `/fr/console/environments/2?at=${position}`);
  await row.getByRole('link', { name: 'servers/1 db-paris-01' }).waitFor();
  const deleted = p.locator('table.changes tbody tr', { hasText: 'TagDeleted' }).first();
  await deleted.getByRole('link', { name: `tags/${made.body.id} legacy-dc` }).waitFor();
  await accessible(p, 'changes-named');
  await then.click();
  await p.getByRole('heading', { name: 'As it was then' }).waitFor();
  await p.getByRole('cell', { name: '"Preprod"', exact: true }).waitFor();
});

test('a narrow window: the changes fit its width; the keyboard reaches the filters', async () => {
  const p = await page({ width: 420, height: 800 });
  await signIn(p, world.service.url, world.admin);
  await p.locator('table.changes tbody tr').first().waitFor();
  const fits = await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
  assert.ok(fits, 'no horizontal scroll');
  await p.reload();
  await p.locator('table.changes tbody tr').first().waitFor();
  await p.keyboard.press('Tab');
  assert.is(await p.evaluate(() => document.activeElement?.textContent), 'Skip to the content');
  await p.keyboard.press('Tab');
  assert.is(await p.evaluate(() => document.activeElement?.textContent), 'Changes', 'then the views');
  await p.screenshot({ path: join(SHOTS, 'narrow.png'), fullPage: true });
});

it.run();
