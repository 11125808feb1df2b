import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a long answer may hold the event loop before it lets other work run. */
export const TURN_MS = 4;

/**
 * Long work done a slice at a time: `pause()` yields to the event loop once the current slice has
 * run TURN_MS, so that a diff, a list at a moment or a catch-up never holds every other request for
 * more than a few milliseconds (bench/abuse.ts measures the slowest concurrent GET).
 */
export class Turns {
  private started = performance.now();

  async pause(): Promise<void> {
    if (performance.now() - this.started < TURN_MS) return;
    await nextTurn();
    this.started = performance.now();
  }
}
