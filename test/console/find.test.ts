import { type Browser, chromium } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ARGS, accessible, CHROMIUM } from '../support/browser.js';
import { BASE, send } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

/** The console's Find box, in Debian's chromium: a renamed server found by its old name, leading to its page. */

const browserAvailable = toolAvailable(CHROMIUM, ['--version'], 'BROWSER_REQUIRED', 'the audit console in a browser');
const it = browserAvailable ? test : test.skip;

it('Find: an entry by its old name, then its page; every request on the origin', async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  let browser: Browser | undefined;
  const requested: string[] = [];
  try {
    const body = { id_client: 99, id_environment: 1, name: 'db-paris-02', ip: '10.88.0.2', login: 'dba', passwd: 'x' };
    const made = await send(service.url, 'POST', `${BASE}/servers`, { body });
    await send(service.url, 'PATCH', `${BASE}/servers/${made.body.id}`, {
      body: { name: 'db-lyon-07', display_name: 'db-lyon-07' },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = await browser.newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => assert.unreachable(`the page threw: ${error.message}`));
    await page.goto(`${service.url}/fr/console/`);
    await page.getByRole('searchbox', { name: 'Find' }).fill('paris-02');
    const found = page
      .getByRole('list', { name: 'Entries found' })
      .getByRole('link', { name: `servers/${made.body.id} db-lyon-07` });
    await found.waitFor();
    await page.getByText('name was "db-paris-02"').waitFor();
    await accessible(page, 'find');
    await found.click();
    await page.getByRole('heading', { name: `servers/${made.body.id}`, exact: true }).waitFor();
  } finally {
    await browser?.close();
    await service.stop();
  }
  const elsewhere = requested.filter((url) => !url.startsWith(service.url));
  assert.equal(elsewhere, [], 'no request leaves the origin');
});

test.run();
