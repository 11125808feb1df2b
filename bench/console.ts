// The audit console on a large log, in Debian's Chromium (headless), each beside an anchor from the
// same run:
//   the first rows of the changes view, from navigation   vs  the same first page fetched alone (goal: < 1 s)
//   each older page ("Older changes", 20 in a row)         vs  such a page fetched alone, and one at the log's start
// Usage: npm run bench:console   (BENCH_EVENTS, default 1,000,000; BENCH_SERVERS, default 10,000;
// CHROMIUM_PATH, default /usr/bin/chromium)
import { chromium, type Page } from 'playwright-core';
import { EVENTS, generate, SERVERS, serve } from './large-log.js';
import { percentiles, table } from './lib.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
const ROUNDS = 10;
/** Older pages asked for in a row in each round: 1,000 rows shown at the end. */
const CLICKS = 20;

async function fetched(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return performance.now() - started;
}

const rows = (page: Page) => page.locator('table.changes tbody tr');

/** In the page: clicks "Older changes" and resolves with the time until the new rows are drawn. */
async function olderPage(): Promise<number> {
  const body = document.querySelector('table.changes tbody')!;
  const before = body.children.length;
  const started = performance.now();
  const grown = new Promise<void>((resolve) => {
    const observer = new MutationObserver(() => {
      if (body.children.length <= before) return;
      observer.disconnect();
      resolve();
    });
    observer.observe(body, { childList: true });
  });
  (document.querySelector('button.more') as HTMLButtonElement).click();
  await grown;
  await new Promise((resolve) => requestAnimationFrame(resolve));
  return performance.now() - started;
}

async function main() {
  console.log(`a log of ${EVENTS} events over ${SERVERS} servers`);
  const made = await generate();
  console.log(`generated: ${made.events} events in ${made.seconds.toFixed(1)} s`);
  const service = await serve();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  try {
    const first: number[] = [];
    const firstAlone: number[] = [];
    const older: number[] = [];
    const olderAlone: number[] = [];
    const deepAlone: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const started = performance.now();
      await page.goto(`${service.url}/fr/console/changes`);
      await rows(page).first().waitFor();
      first.push(performance.now() - started);
      firstAlone.push(await fetched(`${service.url}/fr/api/changes?order=desc&limit=50`));
      // Scrolling back: "Older changes" again and again, each page appended under the ones shown,
      // timed inside the page from the click to the next frame with the new rows.
      for (let click = 1; click <= CLICKS; click++) older.push(await page.evaluate(olderPage));
      const last = Number(await rows(page).last().getAttribute('data-position'));
      olderAlone.push(await fetched(`${service.url}/fr/api/changes?order=desc&limit=50&before=${last}`));
      deepAlone.push(await fetched(`${service.url}/fr/api/changes?order=desc&limit=50&before=${1000 + round * 97}`));
      await page.close();
    }
    table([
      { name: 'console: first rows of the changes', ...percentiles(first), target: 'goal < 1000 ms' },
      { name: '  anchor: that page fetched alone', ...percentiles(firstAlone) },
      { name: `console: each older page (${CLICKS} in a row)`, ...percentiles(older) },
      { name: '  anchor: such a page fetched alone', ...percentiles(olderAlone) },
      { name: "  anchor: a page at the log's start", ...percentiles(deepAlone) },
    ]);
    const ratio = percentiles(first).p50 / percentiles(firstAlone).p50;
    console.log(`first rows / the page fetched alone (p50): ${ratio.toFixed(1)}×`);
  } finally {
    await browser.close();
    service.stop();
  }
}

await main();
