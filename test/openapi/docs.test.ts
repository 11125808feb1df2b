import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiDocument } from '../../src/main.js';
import { send } from '../support/harness.js';
import { ROOT, spawnService, tempDir } from '../support/process.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
const it = suite('the docs page in a real browser (Debian chromium, headless)');

/**
 * "Try it out" on PATCH of a server, twice: both answer 200, and the page sends no Idempotency-Key
 * or If-Match of its own and no reference the example would move the server with.
 */
async function tryPatchTwice(page: Page, url: string): Promise<void> {
  const server = { id_client: 99, id_environment: 1, name: 'docs-1', ip: '10.9.9.9', login: 'pma', passwd: 'pw' };
  const made = await send(url, 'POST', '/fr/api/config/servers', { body: server });
  const sent: { headers: Record<string, string>; body: string | null }[] = [];
  page.on('request', (request) => {
    if (request.method() === 'PATCH') sent.push({ headers: request.headers(), body: request.postData() });
  });
  const patch = page.locator('#operations-servers-patchServer');
  await patch.locator('.opblock-summary').click();
  await patch.locator('tr[data-param-name="id"] input').fill(String(made.body.id));
  for (let round = 1; round <= 2; round++) {
    const [response] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'PATCH', { timeout: 15_000 }),
      patch.locator('button.execute').click(),
    ]);
    assert.is(response.status(), 200, `round ${round}: ${await response.text()}`);
  }
  assert.is(sent.length, 2);
  for (const { headers, body } of sent) {
    assert.not.ok('idempotency-key' in headers || 'if-match' in headers, JSON.stringify(headers));
    assert.not.match(body ?? '', /id_client|id_environment/);
  }
}

if (existsSync(CHROMIUM)) {
  it('renders every operation, a "Try it out" GET gets a 200, no request leaves 127.0.0.1; a screenshot is kept', async () => {
    const service = await spawnService({ DATA_DIR: tempDir() });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      await page.goto(`${service.url}/fr/api/docs`);
      const operations = Object.values(apiDocument('test').paths ?? {}).flatMap((item) =>
        ['get', 'put', 'post', 'delete', 'patch'].filter((method) => method in item),
      );
      await page.waitForFunction((n) => document.querySelectorAll('.opblock').length >= n, operations.length, {
        timeout: 30_000,
      });
      assert.is(await page.locator('.opblock').count(), operations.length, 'one block per operation');

      const health = page.locator('#operations-operations-getHealth');
      await health.locator('.opblock-summary').click();
      await health.locator('button.execute').click();
      const status = health.locator('.live-responses-table tr.response .response-col_status').first();
      await status.waitFor({ timeout: 15_000 });
      assert.is((await status.textContent())?.trim(), '200');
      assert.match(
        (await health.locator('.live-responses-table .microlight').first().textContent()) ?? '',
        /"status": "ok"/,
      );

      await tryPatchTwice(page, service.url);

      const dir = join(ROOT, 'artifacts');
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: join(dir, 'docs-page.png'), fullPage: false });

      const outside = requested.filter((url) => !/^(http:\/\/127\.0\.0\.1:\d+\/|data:|blob:)/.test(url));
      assert.equal(outside, [], 'requests that left 127.0.0.1');
      assert.ok(
        requested.some((url) => url.endsWith('/healthz')),
        'the try-it request went to this instance',
      );
    } finally {
      await browser.close();
      await service.stop();
    }
  });
} else {
  if (process.env.BROWSER_REQUIRED) throw new Error(`BROWSER_REQUIRED is set but ${CHROMIUM} is not installed`);
  console.log(
    `\n  SKIPPED: the docs page browser test — ${CHROMIUM} is not installed (Debian: apt-get install chromium).\n`,
  );
  it.skip('the docs page in a real browser (chromium not installed)', () => {});
}

it.run();
