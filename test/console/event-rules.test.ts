import { type Browser, chromium, type Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ARGS, accessible, CHROMIUM } from '../support/browser.js';
import { BASE, send } from '../support/harness.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { Receiver, tokenKnown } from '../support/receiver.js';
import { toolAvailable } from '../support/tools.js';

/**
 * The console's event rules (admins): each rule with what it sends where and its delivery's state,
 * and a rule's deliveries with their last error — in Debian's chromium, through the public API only.
 */

const browserAvailable = toolAvailable(CHROMIUM, ['--version'], 'BROWSER_REQUIRED', 'the audit console in a browser');
const it = browserAvailable ? test : test.skip;

async function token(service: ServiceProcess, dataDir: string, name: string, role: string): Promise<string> {
  const issued = await runCli(['token', 'create', '--name', name, '--role', role], { DATA_DIR: dataDir });
  assert.is(issued.code, 0, issued.stderr);
  const value = issued.stdout.trim().split('\n').pop()!;
  await tokenKnown([service.url], value);
  return value;
}

/** Two rules, one to a receiver that takes everything, one to a receiver that answers 500. */
async function seed(service: ServiceProcess, admin: string, good: Receiver, bad: Receiver): Promise<void> {
  const headers = { Authorization: `Bearer ${admin}` };
  for (const [name, receiver] of [
    ['to-cmdb', good],
    ['to-broken', bad],
  ] as const) {
    const made = await send(service.url, 'POST', '/fr/api/event-rules', {
      headers,
      body: { name, on: ['tags'], target: { url: receiver.url } },
    });
    assert.is(made.status, 201, made.text);
  }
  const tag = await send(service.url, 'POST', `${BASE}/tags`, {
    headers,
    body: { name: 'galera', color: '#FFFFFF', background: '#000000' },
  });
  assert.is(tag.status, 201);
  await good.until((got) => got.length === 1);
  await bad.until((got) => got.length >= 1);
}

async function signIn(page: Page, url: string, value: string): Promise<void> {
  await page.goto(`${url}/fr/console/`);
  await page.getByRole('textbox', { name: 'Token' }).fill(value);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Changes' }).waitFor();
}

/** The rules' view as an admin sees it: each rule's state, then one rule's deliveries. */
async function rulesAndDeliveries(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Event rules' }).click();
  await page.getByRole('heading', { name: 'Event rules' }).waitFor();
  const broken = page.getByRole('row', { name: /to-broken/ });
  await broken.getByText('answered 500').waitFor();
  await page
    .getByRole('row', { name: /to-cmdb/ })
    .getByText('0 behind')
    .waitFor();
  await accessible(page, 'event-rules');
  await broken.getByRole('link', { name: 'Deliveries' }).click();
  await page.getByRole('heading', { name: 'Deliveries of to-broken' }).waitFor();
  const row = page.locator('table.deliveries tbody tr').first();
  await row.getByText('retrying').waitFor();
  await row.getByText('answered 500').waitFor();
  await accessible(page, 'event-rule-deliveries');
  await page.getByRole('combobox', { name: 'State' }).selectOption('delivered');
  await page.getByText('No delivery delivered yet.').waitFor();
}

it('an admin sees the rules, their delivery and the deliveries of one; a reader has no such view', async () => {
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir, ANONYMOUS_ROLE: 'none', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };
  const service = await spawnService(env);
  const [good, bad] = await Promise.all([new Receiver().start(), new Receiver().start()]);
  bad.behaviour = () => ({ status: 500 });
  let browser: Browser | undefined;
  const requested: string[] = [];
  try {
    const admin = await token(service, dataDir, 'auditor', 'admin');
    const reader = await token(service, dataDir, 'reader', 'reader');
    await seed(service, admin, good, bad);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = await browser.newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => assert.unreachable(`the page threw: ${error.message}`));
    await signIn(page, service.url, admin);
    await rulesAndDeliveries(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, service.url, reader);
    assert.is(await page.getByRole('link', { name: 'Event rules' }).count(), 0, 'no such view for a reader');
  } finally {
    await browser?.close();
    await Promise.all([good.close(), bad.close()]);
    await service.stop();
  }
  const elsewhere = requested.filter((url) => !url.startsWith(service.url));
  assert.equal(elsewhere, [], 'no request leaves the origin');
});

test.run();
