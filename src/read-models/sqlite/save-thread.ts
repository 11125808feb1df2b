import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import type { SaveJob } from './save-jobs.js';
import type { SaveQueue } from './saving.js';
import { startWorker } from './threads.js';

/** Atomics.waitAsync (ES2024): the wait for a counter to move, as a promise. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: Int32Array, index: number, value: number, timeout: number): { async: boolean; value: unknown };
  }
).waitAsync;

/** Slots of the counters shared with the worker. */
export const SAVED = 0;
export const FAILING = 1;
export const CLOSED = 2;

/** The longest `settle` waits for saves under way. */
const SETTLE_LIMIT_MS = 10_000;
/**
 * Jobs handed over and not yet saved, at most: past it, `save` waits for the worker. A file in use
 * gets a job about every 100 ms, and a slow save must not hold the event loop: room for 64. A
 * rebuild, whose fold outruns SQLite, gets 4: it is held to the worker's pace instead of piling
 * folded rows up in memory (bench/replay.ts).
 */
export const MAX_UNSAVED = { inUse: 64, bulk: 4 };

/**
 * How long the worker holds a job of a file in use for the ones after it, to write them all in one
 * transaction (see SaveQueue); a wait for a job held (`settle`, a question of the store) has them
 * written at once. A file filled in bulk is written as its jobs come.
 */
export const SAVE_HOLD_MS = 500;

/** A failed save as the worker reports it. */
interface Failure {
  message: string;
  code?: string;
}

/**
 * Saves the read models from a worker thread, off the event loop, which a save would otherwise hold
 * (bench/http.ts, largest event-loop delay at 100,000 servers). Jobs are written in the order they are handed over; `settle` waits until all handed
 * over so far are in the file (a query of the stored read models then sees every fold before it).
 *
 * Jobs are kept until the worker has counted them saved. Should the worker stop unasked, they and
 * every later job are saved on the event loop instead, through `fallback()`, and a process warning
 * says so: the read models stay current, only slower to save. A rebuild's file is not taken over:
 * the rebuild fails, and the next one resumes it (see takeOver).
 */
export class SaveThread {
  private readonly worker: Worker;
  private readonly counters = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private sent = 0;
  /** Jobs handed over and not yet counted saved, oldest first, with their number (1, 2, ...). */
  private unsaved: { seq: number; job: SaveJob }[] = [];
  private inProcess?: SaveQueue;
  private closing = false;
  /** The worker has ended (its 'exit' event; a thread terminated may not have moved CLOSED). */
  private exited = false;
  /** The worker's failed saves: heard as they come, or taken at once by a wait that finds saves failing. */
  private readonly failures: MessagePort;
  private readonly maxUnsaved: number;

  constructor(
    private readonly location: string,
    private readonly failed: (error: Error) => void,
    private readonly fallback: () => SaveQueue,
    /** A file filled in one go (see SqliteReadModelStore): the worker writes it unsynced, in long transactions. */
    private readonly bulk = false,
    holdMs = bulk ? 0 : SAVE_HOLD_MS,
  ) {
    this.maxUnsaved = bulk ? MAX_UNSAVED.bulk : MAX_UNSAVED.inUse;
    const channel = new MessageChannel();
    this.failures = channel.port1;
    this.failures.on('message', (failure: Failure) => this.report(failure));
    this.failures.unref();
    const workerData = { location, counters: this.counters, bulk, failures: channel.port2, holdMs };
    this.worker = startWorker('save-worker', { workerData, transferList: [channel.port2] });
    this.worker.on('error', (error) => this.failed(error));
    this.worker.on('exit', () => {
      this.exited = true;
      if (!this.closing) this.takeOver();
    });
    this.worker.unref();
  }

  save(job: SaveJob): void {
    if (this.inProcess) {
      this.inProcess.save(job);
      return;
    }
    this.wait(this.sent + 1 - this.maxUnsaved);
    this.unsaved.push({ seq: ++this.sent, job });
    this.worker.postMessage({ job });
  }

  /**
   * Blocks until every job handed over is saved (at most SETTLE_LIMIT_MS). Returns at once while
   * saves are failing: the stored read models are then behind, as they would be on the event loop.
   * For a process that does nothing else meanwhile (a start, a replay, a close); a query of a
   * serving instance waits with `caughtUp`.
   */
  settle(): void {
    this.wait(this.sent);
  }

  /**
   * Resolves once every job handed over so far is saved, as `settle`, but without holding the event
   * loop: the wait is Atomics.waitAsync on the counter the worker moves.
   */
  async caughtUp(): Promise<void> {
    const seq = this.sent;
    const until = this.hurry(seq);
    for (let step = this.pending(seq, until); step; step = this.pending(seq, until)) {
      const waiting = waitAsync(this.counters, SAVED, step.saved, step.ms);
      if (waiting.async) await waiting.value;
    }
    this.forgetSaved();
  }

  /**
   * Blocks until job `seq` is saved: at most SETTLE_LIMIT_MS, and not while saves fail, once taken
   * over, or once the worker has stopped (its 'exit' event, which takes over, comes after).
   */
  private wait(seq: number): void {
    const until = this.hurry(seq);
    for (let step = this.pending(seq, until); step; step = this.pending(seq, until)) {
      Atomics.wait(this.counters, SAVED, step.saved, step.ms);
    }
    this.forgetSaved();
  }

  /**
   * Asks the worker to write at once the jobs it holds for the ones after them, since someone waits
   * for job `seq`; returns when that wait gives up (SETTLE_LIMIT_MS from now).
   */
  private hurry(seq: number): number {
    if (!this.inProcess && Atomics.load(this.counters, SAVED) < seq) this.worker.postMessage({ hurry: true });
    return performance.now() + SETTLE_LIMIT_MS;
  }

  /**
   * One look at the way to job `seq`: nothing when the wait is over (saved, taken over, the worker
   * stopped, saves failing — their failures reported — or `until` passed), else the count to wait
   * on and for how long at most.
   */
  private pending(seq: number, until: number): { saved: number; ms: number } | undefined {
    const saved = Atomics.load(this.counters, SAVED);
    if (this.inProcess || this.exited || saved >= seq || Atomics.load(this.counters, CLOSED) === 1) return undefined;
    if (Atomics.load(this.counters, FAILING) === 1) {
      this.takeFailures();
      return undefined;
    }
    const left = until - performance.now();
    return left > 0 ? { saved, ms: Math.min(left, 100) } : undefined;
  }

  /**
   * Saves what was handed over, then closes the worker's connection (a file filled in bulk gets its
   * indexes first, unless `indexes` is false: it is thrown away next) and waits for the thread to end,
   * however long that takes: the file is whole when close returns. A save that keeps failing is given
   * up at close (the log still has its events).
   */
  close(indexes = true): void {
    this.closing = true;
    this.inProcess?.close();
    if (this.inProcess) return;
    if (!this.exited) {
      this.worker.postMessage({ close: true, indexes });
      while (Atomics.load(this.counters, CLOSED) === 0) Atomics.wait(this.counters, CLOSED, 0);
      void this.worker.terminate();
    }
    this.failures.close();
  }

  /** Reports the failures the worker sent and no event delivered yet (the caller is waiting). */
  private takeFailures(): void {
    for (let taken = receiveMessageOnPort(this.failures); taken; taken = receiveMessageOnPort(this.failures)) {
      this.report(taken.message as Failure);
    }
  }

  private report(failure: Failure): void {
    this.failed(Object.assign(new Error(failure.message), { code: failure.code }));
  }

  private forgetSaved(): void {
    const saved = Atomics.load(this.counters, SAVED);
    let n = 0;
    while (n < this.unsaved.length && this.unsaved[n].seq <= saved) n++;
    if (n > 0) this.unsaved.splice(0, n);
  }

  private takeOver(): void {
    this.forgetSaved();
    if (this.bulk) {
      // A rebuild's jobs counted saved since its last consistent point were in the worker's open
      // transaction, gone with it: nothing more is saved, the rebuild stops with this failure, and
      // the next one resumes from that point.
      this.failed(new Error(`the saving thread of the rebuild in ${this.location} stopped`));
      return;
    }
    process.emitWarning(`read models of ${this.location} are saved on the event loop: their worker thread stopped`, {
      code: 'PMACONTROL_SAVE_THREAD',
    });
    this.inProcess = this.fallback();
    for (const { job } of this.unsaved.splice(0)) this.inProcess.save(job);
  }
}
