import { loadConfig } from '../config.js';
import { assertServes, recordMoveTo, storeAt } from '../data-dir.js';
import { openEventStore, openTargetStore } from '../main.js';
import { UsageError } from './catalog.js';

const BATCH = 1000;

/**
 * `copy-log --to <target>`: copies every event of the configured store (EVENT_STORE and its
 * settings) into an empty target, in log order, with its stream, revision, type, data and metadata
 * (which holds the time, the actor and the request of each event). A target that holds any event is
 * refused. The log only grows, so a copy made while the service writes is a consistent prefix of it
 * (an online backup); the count at the end says how many events it holds.
 */
export async function runCopyLog(argv: string[]): Promise<number> {
  if (argv.length !== 2 || argv[0] !== '--to') throw new UsageError('copy-log needs --to <target>');
  const config = loadConfig();
  assertServes(config);
  const opened = await openTargetStore(argv[1]);
  if (!opened) throw new UsageError('--to must be sqlite:<file> or mysql://user:password@host:port/database');
  const { store: target, shown } = opened;
  const source = await openEventStore(config);
  try {
    if ((await target.readAll({ maxCount: 1 })).length > 0) {
      console.error(`refused: ${shown} already holds events; copy-log only writes into an empty store`);
      return 1;
    }
    const heads = new Map<string, number>();
    let copied = 0;
    for (let after = 0; ; ) {
      const events = await source.readAll({ after, maxCount: BATCH });
      if (events.length === 0) break;
      // Consecutive events of one stream go in one append, at the revision they have in the source.
      for (let i = 0; i < events.length; ) {
        let j = i;
        while (j < events.length && events[j].stream === events[i].stream) j++;
        const run = events.slice(i, j);
        const head = heads.get(run[0].stream);
        if (run[0].revision !== (head ?? -1) + 1)
          throw new Error(`the source log has a gap before ${run[0].stream}@${run[0].revision}`);
        await target.append(
          run[0].stream,
          run.map(({ type, data, metadata }) => ({ type, data, metadata })),
          head ?? 'no_stream',
        );
        heads.set(run[0].stream, run[run.length - 1].revision);
        i = j;
      }
      copied += events.length;
      after = events[events.length - 1].position;
      process.stderr.write(`copied ${copied} events\n`);
    }
    console.log(`copied ${copied} events from ${source.name} to ${shown}`);
    // Its first start on the target is the move: from then on, this DATA_DIR refuses the old store.
    const moved = storeAt(argv[1], config.dataDir);
    if (moved) recordMoveTo(config.dataDir, moved);
    return 0;
  } finally {
    await source.close();
    await target.close();
  }
}
