import { type Browser, chromium, type Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { act, issueTokens, policy, prodServer, type Tokens } from '../approvals/support.js';
import { ARGS, accessible, CHROMIUM } from '../support/browser.js';
import { BASE, send } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

/**
 * The console's approvals, in Debian's chromium: an approver finds what waits for their vote, sees
 * the change field by field, approves with a reason; the requester executes it and reads the
 * password this once — through the public API only.
 */

const browserAvailable = toolAvailable(CHROMIUM, ['--version'], 'BROWSER_REQUIRED', 'the audit console in a browser');
const it = browserAvailable ? test : test.skip;

const bearer = (tokens: Tokens, who: string) => tokens[who].Authorization.replace('Bearer ', '');

async function signIn(page: Page, url: string, value: string): Promise<void> {
  await page.goto(`${url}/fr/console/`);
  await page.getByRole('textbox', { name: 'Token' }).fill(value);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Changes' }).waitFor();
}

/** Bob finds the request in "waiting for my vote", reads its diff and approves it with a reason. */
async function approveAsBob(page: Page, approval: number): Promise<void> {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Approvals' }).click();
  await page.getByRole('heading', { name: 'Approvals' }).waitFor();
  await page.getByRole('link', { name: `#${approval}` }).click();
  await page.getByRole('heading', { name: new RegExp(`Approval ${approval}: update of servers/`) }).waitFor();
  const diff = page.locator('.approval dl.diff');
  await diff.getByText('3310').waitFor();
  assert.ok((await diff.textContent())?.includes('[redacted]'), 'the password is [redacted] in the diff');
  await accessible(page, 'approval');
  await page.getByRole('textbox', { name: 'Reason' }).fill('maintenance window');
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByText('bob (admin) approved').waitFor();
}

it('an approver sees the diff and votes; the requester executes; nothing leaves the origin', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir, ANONYMOUS_ROLE: 'none', POLL_INTERVAL_MS: '50' });
  let browser: Browser | undefined;
  const requested: string[] = [];
  try {
    const tokens = await issueTokens([service], { DATA_DIR: dataDir });
    const rules = { name: 'prod', operations: ['update'], resources: ['servers'], approvals: 1 };
    await policy(service.url, tokens, { ...rules, approvers: { roles: ['admin'] } });
    const id = await prodServer(service.url, 4, 'old-pw', tokens.root);
    const body = { port: 3310, passwd: 'console-new-pw' };
    const held = await send(service.url, 'PATCH', `${BASE}/servers/${id}`, { headers: tokens.alice, body });
    assert.is(held.status, 202, held.text);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = await browser.newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => assert.unreachable(`the page threw: ${error.message}`));
    await signIn(page, service.url, bearer(tokens, 'bob'));
    await approveAsBob(page, held.body.approval.id);
    assert.not.ok((await page.content()).includes('console-new-pw'), 'never the new password');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, service.url, bearer(tokens, 'alice'));
    await page.goto(`${service.url}/fr/console/approvals?show=all&state=approved&id=${held.body.approval.id}`);
    await page.getByRole('button', { name: 'Execute' }).click();
    await page.getByText('Executed.').waitFor();
    const now = await send(service.url, 'GET', `${BASE}/servers/${id}`, { headers: tokens.dave });
    assert.is(now.body.item.port, 3310, 'the approved change ran');
    assert.is((await act(service.url, tokens, 'alice', held.body.approval.id, 'execute')).status, 409);
  } finally {
    await browser?.close();
    await service.stop();
  }
  const elsewhere = requested.filter((url) => !url.startsWith(service.url));
  assert.equal(elsewhere, [], 'no request leaves the origin');
});

test.run();
