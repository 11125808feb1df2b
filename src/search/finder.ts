import type { Logger } from 'pino';
import type { ConfigService } from '../application/service.js';
import { NameIndex, SEARCHED } from './names.js';

export interface Finder {
  index: NameIndex;
  /** Whether the past names are all read (until then, only those changed since the start are known). */
  readonly pastRead: boolean;
}

/**
 * Every this many changes read, the reading of the past lets the event loop go on, and pauses for as
 * long as the slice took: it takes at most half of the main thread, so that the questions asked
 * meanwhile (an export at a moment, a year of changes as CSV) are not slowed by more than that
 * (on a 2,000,000-event history, `export?at=` took 2.4–3.6 s while the past was read at full pace,
 * 0.9–1.1 s after; bench/history.ts).
 */
const SLICE = 2000;

/** The names index of a started service: the state now, every fold from now, the past in the background. */
export function finder(service: ConfigService, logger?: Logger): Finder {
  const index = new NameIndex();
  service.projector.listen((batch) => {
    for (const { effects } of batch) index.folded(effects);
  });
  index.load(service.state);
  const upTo = service.revision + 1;
  const found = { index, pastRead: false };
  readPast(service, index, upTo, logger).then(
    () => {
      found.pastRead = true;
    },
    (error: Error) => logger?.error({ err: { name: error.name, message: error.message } }, 'past names not indexed'),
  );
  return found;
}

/** Every this long, the past is read again after a failure (the change log being rebuilt after damage), at most so many times. */
const RETRY_MS = 2000;
const ATTEMPTS = 150;

/** Reads the past names from the change log, up to `upTo`, again after a failure (five minutes at most). */
async function readPast(service: ConfigService, index: NameIndex, upTo: number, logger?: Logger): Promise<void> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const started = performance.now();
    let read = 0;
    try {
      let sliced = performance.now();
      for (const resource of SEARCHED.keys()) {
        for await (const item of service.changes.changes({ resource, order: 'asc', before: upTo + 1 })) {
          index.follow(item, false);
          if (++read % SLICE !== 0) continue;
          await new Promise((resolve) => setTimeout(resolve, performance.now() - sliced));
          sliced = performance.now();
        }
      }
      index.settle(service.state);
      logger?.info({ changes: read, ms: Math.round(performance.now() - started) }, 'past names indexed');
      return;
    } catch (error) {
      const { name, message } = error as Error;
      logger?.warn({ err: { name, message } }, 'past names not indexed yet: read again soon');
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
    }
  }
  throw new Error('past names not indexed: the change log could not be read');
}
