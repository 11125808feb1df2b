import { type Browser, chromium, type Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ARGS, accessible, CHROMIUM } from '../support/browser.js';
import { BASE, send } from '../support/harness.js';
import { type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

/**
 * The audit report, in Debian's chromium: entry by entry, the log's proof checked in the page (and
 * refused when the proof is altered), printed without controls, saved as a PDF by the browser.
 */

const browserAvailable = toolAvailable(CHROMIUM, ['--version'], 'BROWSER_REQUIRED', 'the audit console in a browser');
const it = browserAvailable ? test : test.skip;

async function seed(service: ServiceProcess): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const body = {
      id_client: 99,
      id_environment: 1,
      name: `db-report-${i}`,
      ip: `10.66.0.${i}`,
      login: 'dba',
      passwd: 'x',
    };
    assert.is((await send(service.url, 'POST', `${BASE}/servers`, { body })).status, 201);
  }
  await send(service.url, 'PATCH', `${BASE}/servers/1`, { body: { port: 3307 } });
}

/** Printed: no control, the report's header kept; then a PDF the browser made. */
async function printed(page: Page): Promise<Buffer> {
  await page.emulateMedia({ media: 'print' });
  assert.not.ok(await page.getByRole('button', { name: 'Make the report' }).isVisible(), 'no control in print');
  assert.not.ok(await page.getByRole('navigation', { name: 'Views' }).isVisible(), 'no navigation in print');
  assert.ok(await page.getByRole('heading', { name: 'Audit report' }).isVisible());
  return page.pdf({ format: 'A4' });
}

it('a report of the period, its proof checked, printed and saved as PDF; an altered proof is refused', async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  let browser: Browser | undefined;
  try {
    await seed(service);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = await browser.newPage();
    page.on('pageerror', (error) => assert.unreachable(`the page threw: ${error.message}`));
    await page.goto(`${service.url}/fr/console/report?resource=servers`);
    await page.getByText(/Verified in this browser: the period’s last change \(\d+\) is in the log/).waitFor();
    await page.getByText('servers/1 db-report-0', { exact: true }).waitFor();
    assert.ok((await page.locator('.report-entry').count()) >= 3);
    await page.getByText(`${new URL(service.url).origin} · the log’s start to now · servers`).waitFor();
    await accessible(page, 'report');
    const pdf = await printed(page);
    assert.is(pdf.subarray(0, 5).toString(), '%PDF-');
    assert.ok(pdf.subarray(-1024).toString().includes('%%EOF'), 'a whole PDF');
    assert.ok((pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length >= 1, 'with pages');
    const altered = await browser.newPage();
    await altered.route('**/fr/api/log/proof/inclusion**', async (route) => {
      const body = (await (await route.fetch()).json()) as { hashes: string[] };
      body.hashes = body.hashes.map((hash) => `${hash.slice(0, -2)}${hash.endsWith('00') ? '11' : '00'}`);
      await route.fulfill({ json: body });
    });
    await altered.goto(`${service.url}/fr/console/report?resource=servers`);
    await altered.getByText(/NOT verified: the inclusion proof of change \d+/).waitFor();
  } finally {
    await browser?.close();
    await service.stop();
  }
});

/** Changes made 50 at a time: `count` PATCHes of server 1's port. */
async function patched(service: ServiceProcess, count: number): Promise<void> {
  for (let done = 0; done < count; done += 50) {
    const batch = Array.from({ length: Math.min(50, count - done) }, (_, i) =>
      send(service.url, 'PATCH', `${BASE}/servers/1`, { body: { port: 4000 + done + i } }),
    );
    for (const reply of await Promise.all(batch)) assert.is(reply.status, 200);
  }
}

/** The changes drawn in the report's table: one first cell each. */
const changeRows = (page: Page) => page.locator('.report-entries td:first-child').count();

/** PDF pages the browser made. */
const pages = (pdf: Buffer) => (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length;

it('a long report shows its first changes on screen, every change when printed or saved as PDF', async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  let browser: Browser | undefined;
  try {
    await seed(service);
    await patched(service, 1_200);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = await browser.newPage();
    await page.goto(`${service.url}/fr/console/report?resource=servers`);
    const total = Number((await page.getByText(/^\d+ changes, \d+ entries/).textContent())!.split(' ')[0]);
    assert.ok(total > 1_200, `${total} changes`);
    const shown = await changeRows(page);
    assert.ok(shown >= 1_000 && shown < total, `${shown} of ${total} drawn on screen`);
    await page.getByRole('button', { name: `Show all ${total} changes` }).click();
    assert.is(await changeRows(page), total);
    const printed = await browser.newPage();
    await printed.goto(`${service.url}/fr/console/report?resource=servers`);
    await printed.getByRole('button', { name: `Show all ${total} changes` }).waitFor();
    const pdf = await printed.pdf({ format: 'A4' });
    assert.is(await changeRows(printed), total, 'printing drew every change');
    assert.ok(pages(pdf) > 15, `${pages(pdf)} pages for ${total} changes`);
    await printed.emulateMedia({ media: 'screen' });
    const emulated = await browser.newPage();
    await emulated.goto(`${service.url}/fr/console/report?resource=servers`);
    await emulated.getByRole('button', { name: `Show all ${total} changes` }).waitFor();
    await emulated.emulateMedia({ media: 'print' }); // the page hears of it at its next frame
    await emulated
      .locator('.report-entries td:first-child')
      .nth(total - 1)
      .waitFor({ state: 'attached' });
    assert.is(await changeRows(emulated), total, 'the print media drew every change');
  } finally {
    await browser?.close();
    await service.stop();
  }
});

test.run();
