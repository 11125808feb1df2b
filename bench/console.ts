// The audit console on a large log, in Debian's Chromium (headless), each beside an anchor from the
// same run:
//   the first rows of the changes view, from navigation   vs  the same first page fetched alone (goal: < 1 s)
//   each older page ("Older changes", 20 in a row)         vs  such a page fetched alone, and one at the log's start
//   Find: GET /fr/api/search (a name, an ip, a past hostname, a tag) vs  GET /fr/api/whoami (goal p99 ≤ 50 ms)
//   Find: from typing in the box to the results drawn     (goal ≤ 300 ms)
//   the past names indexed after the start (in the background; the service serves meanwhile)
//   the audit report of a period of about 30,000 changes, from navigation to drawn for print  vs  those
//   changes fetched alone as NDJSON (goal ≤ 5 s)
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

/** Searches as people type them: a server's name, an ip, a hostname servers held before, a tag. */
const QUERIES = (i: number) =>
  [`db-${1 + ((i * 7919) % SERVERS)}`, `10.0.${i % 39}.`, `host-${i % 97}`, `tag-${1 + (i % 20)}`][i % 4]!;

async function pastRead(url: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    const found = (await (await fetch(`${url}/fr/api/search?q=x`)).json()) as { past_read: boolean };
    if (found.past_read) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The search rows: the API alone, then typed in the console's box. */
async function searchRows(url: string, browser: import('playwright-core').Browser) {
  const waited = await pastRead(url);
  if (waited > 200) console.log(`past names indexed ${(waited / 1000).toFixed(1)} s after the changes' rounds`);
  const api: number[] = [];
  const anchor: number[] = [];
  for (let i = 0; i < 200; i++) {
    api.push(await fetched(`${url}/fr/api/search?q=${encodeURIComponent(QUERIES(i))}`));
    anchor.push(await fetched(`${url}/fr/api/whoami`));
  }
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${url}/fr/console/changes`);
  const box = page.getByRole('searchbox', { name: 'Find' });
  const typed: number[] = [];
  for (let i = 0; i < 20; i++) {
    await box.fill('');
    const started = performance.now();
    await box.fill(QUERIES(i));
    await page.getByRole('list', { name: 'Entries found' }).getByRole('link').first().waitFor();
    typed.push(performance.now() - started);
  }
  await page.close();
  return [
    { name: 'Find: GET /fr/api/search', ...percentiles(api), target: 'goal p99 ≤ 50 ms' },
    { name: '  anchor: GET /fr/api/whoami', ...percentiles(anchor) },
    { name: 'Find: typed, to the results drawn', ...percentiles(typed), target: 'goal ≤ 300 ms' },
  ];
}

/** When the change at `position` happened. */
async function timeOf(url: string, position: number): Promise<string> {
  const page = await (await fetch(`${url}/fr/api/changes?after=${position - 1}&limit=1`)).json();
  return (page as { items: { at: string }[] }).items[0]!.at;
}

/** The report of about 30,000 changes (a period of time), from navigation to drawn in print; and those changes fetched alone. */
async function reportRows(url: string, browser: import('playwright-core').Browser) {
  const drawn: number[] = [];
  const alone: number[] = [];
  const counts: number[] = [];
  for (let round = 0; round < 3; round++) {
    const from = 100_000 + round * 200_000;
    const period = `since=${encodeURIComponent(await timeOf(url, from))}&until=${encodeURIComponent(await timeOf(url, from + 30_000))}`;
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const started = performance.now();
    await page.goto(`${url}/fr/console/report?${period}`);
    const summary = page.getByText(/^\d+ changes, \d+ entries/);
    await summary.waitFor({ timeout: 120_000 });
    await page.emulateMedia({ media: 'print' });
    // The frame that hears of the print media draws every change; then the whole report is laid out.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
    await page.evaluate(() => document.body.scrollHeight);
    drawn.push(performance.now() - started);
    counts.push(Number((await summary.textContent())!.split(' ')[0]));
    await page.close();
    const fetchStarted = performance.now();
    const reply = await fetch(`${url}/fr/api/changes?${period}`, { headers: { Accept: 'application/x-ndjson' } });
    await reply.arrayBuffer();
    alone.push(performance.now() - fetchStarted);
  }
  console.log(`report periods held ${counts.join(', ')} changes`);
  return [
    { name: 'report: ~30,000 changes drawn for print', ...percentiles(drawn), target: 'goal ≤ 5000 ms' },
    { name: '  anchor: those changes fetched alone', ...percentiles(alone) },
  ];
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
    const searched = await searchRows(service.url, browser);
    const indexed = service.lines().find((line) => line.includes('past names indexed'));
    if (indexed) {
      const { changes, ms } = JSON.parse(indexed) as { changes: number; ms: number };
      console.log(
        `past names indexed in the background: ${changes} changes read in ${(ms / 1000).toFixed(1)} s after the start`,
      );
    }
    const reported = await reportRows(service.url, browser);
    table([
      ...searched,
      ...reported,
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
