import { type Browser, chromium } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { call, inventory, moves, openSet, stageMany } from '../change-sets/support.js';
import { ARGS, accessible, CHROMIUM } from '../support/browser.js';
import { BASE } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

/**
 * The console's change sets, in Debian's chromium: a change set's diff with its conflict, a side
 * chosen for it, merged — through the public API only, every request on the origin.
 */

const browserAvailable = toolAvailable(CHROMIUM, ['--version'], 'BROWSER_REQUIRED', 'the audit console in a browser');
const it = browserAvailable ? test : test.skip;

it("a change set's diff shows its conflict; a side chosen, it merges", async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  let browser: Browser | undefined;
  const requested: string[] = [];
  try {
    const { servers, environment } = await inventory(service.url, 3);
    const id = await openSet(service.url, 'move three');
    assert.is((await stageMany(service.url, id, moves(servers, environment))).status, 202);
    await call(service.url, 'PATCH', `${BASE}/servers/${servers[1]}`, { id_environment: 3 });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = await browser.newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => assert.unreachable(`the page threw: ${error.message}`));
    await page.goto(`${service.url}/fr/console/change-sets`);
    await page.getByRole('link', { name: `#${id} move three` }).click();
    await page.getByRole('heading', { name: `Change set ${id}: move three` }).waitFor();
    await page.getByText('1 field(s) changed since the base').waitFor();
    assert.is(await page.locator('table.change-set-diff tr.conflict').count(), 1);
    await accessible(page, 'change-set');
    await page.getByRole('button', { name: 'Merge' }).click();
    await page.getByText(/changed since the change set's base/).waitFor();
    await page
      .getByRole('combobox', { name: `Which side wins servers/${servers[1]}/id_environment` })
      .selectOption('change-set');
    await page.getByRole('button', { name: 'Merge' }).click();
    await page.getByText(/^merged ·/).waitFor();
    const moved = await call(service.url, 'GET', `${BASE}/servers?id_environment=${environment}`);
    assert.is(moved.body.items.length, 3);
  } finally {
    await browser?.close();
    await service.stop();
  }
  const elsewhere = requested.filter((url) => !url.startsWith(service.url));
  assert.equal(elsewhere, [], 'no request leaves the origin');
});

test.run();
