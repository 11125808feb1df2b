import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import * as assert from 'uvu/assert';

/** The browser the console's tests drive: Debian's chromium, headless, never a downloaded one. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Where the screenshots of each view are kept after the run, to be looked at (never committed). */
export const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? join(tmpdir(), 'pmacontrol-console-screenshots');
mkdirSync(SHOTS, { recursive: true });

/** Runs axe-core on the page: no serious or critical violation. */
export async function accessible(page: Page, view: string) {
  await page.evaluate(AXE); // through the debugger protocol: the page's own CSP stays in force for it
  const found = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  const bad = found.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(bad, [], `${view}: ${JSON.stringify(bad)}`);
  await page.screenshot({ path: join(SHOTS, `${view}.png`), fullPage: true });
}
