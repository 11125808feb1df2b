import { type ReplayReport, replay } from '../application/replay.js';
import { loadConfig } from '../config.js';
import { assertServes } from '../data-dir.js';
import { createLogger, openStores } from '../main.js';
import { UsageError } from './catalog.js';

/** `replay [--apply]`: rebuilds the read models from the log beside the stored ones and compares. */
export async function runReplay(args: string[]): Promise<number> {
  if (args.some((arg) => arg !== '--apply')) throw new UsageError(`replay takes --apply only, not ${args.join(' ')}`);
  const apply = args.includes('--apply');
  const config = loadConfig();
  assertServes(config);
  const stores = await openStores(config, createLogger(config.logLevel), apply ? 'alone' : 'shared');
  const { store, readModels, rebuild, synced } = stores;
  await synced;
  const fresh = rebuild.open();
  let shown = 0;
  const progress = (events: number) => {
    if (events - shown < 10_000) return;
    shown = events;
    process.stderr.write(`replayed ${events} events\n`);
  };
  let report: ReplayReport;
  try {
    report = await replay(store, readModels, fresh, progress);
  } finally {
    await store.close();
    readModels.close();
    fresh.close();
    stores.lock.release();
  }
  console.log(`replayed ${report.events} events`);
  for (const line of report.differences.slice(0, 100)) console.log(`  ${line}`);
  if (report.differences.length > 100) console.log(`  … and ${report.differences.length - 100} more`);
  if (report.differences.length === 0) {
    rebuild.discard();
    console.log('read models match the log');
    return 0;
  }
  if (!apply) {
    rebuild.discard();
    console.log(`${report.differences.length} differences; run with --apply to replace the read models`);
    return 1;
  }
  rebuild.adopt();
  console.log(`replaced the read models (${report.differences.length} differences)`);
  return 0;
}
