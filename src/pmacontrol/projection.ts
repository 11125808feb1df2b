import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Caller, ConfigService, ParseWrite } from '../application/service.js';
import type { ResourceName } from '../domain/resources.js';
import type { PmaControlCrypt } from './crypt.js';
import type { PmaControlDatabase, ProjectionState } from './database.js';
import {
  adoptRequests,
  type Drift,
  type DriftDeps,
  type DriftSelection,
  findDrift,
  overwriteEntries,
  selected,
} from './drift.js';
import { entryWrites } from './row-writes.js';
import { KEPT, keptOf } from './rows.js';

/**
 * Keeps PmaControl's tables equal to the configuration (PMACONTROL_DB_URL): it follows the log and,
 * for each batch of events, writes the rows of the entries they touched, as they are now, in one
 * transaction with the position reached. One instance applies at a time (a lease in that database);
 * the others wait to take over. It never holds back the API: an outage of that database is retried
 * with a back-off, said once in the log, and caught up when it is back.
 */

/** What `GET /fr/api/pmacontrol/status` answers. */
export interface ProjectionStatus {
  enabled: boolean;
  /** Whether this instance holds the lease and applies. */
  applying: boolean;
  holder: string | null;
  /** The last position applied (0: nothing yet), and the log's. */
  position: number;
  log_position: number;
  /** Events not applied yet. */
  lag: number;
  applied_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  /** Differences found by the last scheduled look for drift, and when (null: not looked yet). */
  drift: number | null;
  drift_checked_at: string | null;
}

export interface ProjectionOptions {
  service: ConfigService;
  database: PmaControlDatabase;
  crypt: PmaControlCrypt;
  logger: Logger;
  /** How long a lease lasts unless renewed; another instance takes over once it has run out. */
  leaseMs: number;
  /** Events per transaction at most. */
  batch?: number;
  /** Checks a row read back from PmaControl's tables as a write would be checked (drift). */
  parse: ParseWrite;
  /** How often the instance that writes looks for drift (0: only when asked). */
  driftMs: number;
}

/** How long a batch folded waits for the next ones before they are written together. */
const COALESCE_MS = 20;

/** The longest wait between two tries while PmaControl's database cannot be reached. */
const MAX_BACKOFF_MS = 5000;

/** A message about PmaControl's database without what its URL may hold (a password). */
const said = (error: unknown) => ((error as Error).message ?? String(error)).replace(/\/\/[^@/\s]*@/g, '//…@');

export class PmaControlProjection {
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private stopped = false;
  private wake?: () => void;
  private running?: Promise<void>;
  private known: ProjectionState = { position: 0, holder: null, leaseUntil: null, appliedAt: null };
  private applying = false;
  private lastError: { message: string; at: string } | null = null;
  private down = false;
  private lastDrift: { count: number; at: string } | null = null;
  private nextDrift = 0;
  /** When the lease must be renewed, if no batch has renewed it by then. */
  private renewAt = 0;

  constructor(private readonly options: ProjectionOptions) {
    options.service.projector.listen(() => this.wake?.());
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    if (this.applying) await this.options.database.release(this.holder).catch(() => {});
    await this.options.database.close();
  }

  /** The position of the log's last event. */
  private get head(): number {
    return this.options.service.revision + 1;
  }

  status(): ProjectionStatus {
    const { position, holder, appliedAt } = this.known;
    return {
      enabled: true,
      applying: this.applying,
      holder,
      position,
      log_position: this.head,
      lag: Math.max(0, this.head - position),
      applied_at: appliedAt,
      last_error: this.lastError?.message ?? null,
      last_error_at: this.lastError?.at ?? null,
      drift: this.lastDrift?.count ?? null,
      drift_checked_at: this.lastDrift?.at ?? null,
    };
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let more = false;
      try {
        more = await this.step();
        if (this.down)
          this.options.logger.info(
            { position: this.known.position },
            "pmacontrol projection: PmaControl's database is back",
          );
        this.down = false;
        failures = 0;
      } catch (error) {
        failures++;
        this.applying = false;
        this.lastError = { message: said(error), at: new Date().toISOString() };
        if (!this.down) {
          this.options.logger.warn(
            { err: this.lastError.message },
            "pmacontrol projection: PmaControl's database cannot be written; retrying",
          );
        }
        this.down = true;
      }
      if (more && failures === 0) continue;
      const { leaseMs, driftMs } = this.options;
      const idle = Math.min(leaseMs / 3, driftMs || Number.POSITIVE_INFINITY);
      const pause = failures > 0 ? Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures) : idle;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        this.wake = () => {
          clearTimeout(timer);
          // Batches folded within a few milliseconds go into one transaction (bench/pmacontrol.ts).
          setTimeout(resolve, this.stopped ? 0 : COALESCE_MS);
          this.wake = undefined;
        };
      });
      this.wake = undefined;
    }
  }

  /** One turn: the lease taken or renewed, then one batch applied if this instance holds it; true if more waits. */
  private async step(): Promise<boolean> {
    const { database, leaseMs } = this.options;
    // Each batch renews the lease in its own transaction: a separate renewal only while idle or waiting.
    if (!this.applying || Date.now() >= this.renewAt) {
      this.applying = await database.lease(this.holder, leaseMs);
      this.known = await database.state();
      this.renewAt = Date.now() + leaseMs / 3;
    }
    if (!this.applying) return false;
    if (this.known.position >= this.head) {
      await this.scheduledDrift();
      return false;
    }
    const { touched, position } = await this.touched(this.known.position);
    const writes = await entryWrites(this.options, touched);
    if (!(await database.apply(this.holder, leaseMs, position, writes))) {
      this.applying = false;
      return false;
    }
    this.renewAt = Date.now() + leaseMs / 3;
    this.known = { ...this.known, position, holder: this.holder, appliedAt: new Date().toISOString() };
    return position < this.head;
  }

  /** Once caught up, every `driftMs`: drift looked for, logged and counted when there is some. */
  private async scheduledDrift(): Promise<void> {
    const { driftMs, logger } = this.options;
    if (driftMs === 0 || Date.now() < this.nextDrift) return;
    this.nextDrift = Date.now() + driftMs;
    const { report } = await this.drift();
    this.lastDrift = { count: report.items.length, at: report.checked_at };
    if (report.items.length > 0) {
      logger.warn(
        { differences: report.items.length },
        "pmacontrol drift: PmaControl's tables differ from the configuration",
      );
    }
  }

  /** The entries changed since `position` (`resource/id`): not compared for drift. */
  async changedSince(position: number): Promise<Set<string>> {
    if (position === 0)
      return new Set(
        KEPT.flatMap((k) =>
          [...this.options.service.state.collections[k.name].values()].map((e) => `${k.name}/${e.id}`),
        ),
      );
    const { touched } = await this.touched(position, Number.POSITIVE_INFINITY);
    return new Set([...touched].flatMap(([name, ids]) => [...ids].map((id) => `${name}/${id}`)));
  }

  private get driftDeps(): DriftDeps {
    const { service, database, crypt } = this.options;
    return { service, database, crypt, changedSince: (position) => this.changedSince(position) };
  }

  /** What PmaControl's tables say that the configuration does not. */
  drift(): Promise<Drift> {
    return findDrift(this.driftDeps, this.options.parse);
  }

  /** The chosen differences recorded as changes, under `caller` (actor `pmacontrol`), all or none. */
  async adopt(selection: DriftSelection, caller: Caller): Promise<{ adopted: number; events: number }> {
    const drift = await this.drift();
    const chosen = selected(drift.report, selection);
    const requests = adoptRequests(drift, chosen);
    const events = await this.options.service.write.batch((batch) => {
      const refusal = batch.unit(() => {
        for (const request of requests) batch.apply(request);
      });
      if (refusal) throw refusal;
      return batch.size;
    }, caller);
    return { adopted: chosen.length, events };
  }

  /** The chosen rows written again as the configuration has them (a row it does not have: deleted). */
  async overwrite(selection: DriftSelection): Promise<{ overwritten: number }> {
    const drift = await this.drift();
    const chosen = selected(drift.report, selection);
    const touched = new Map<ResourceName, Set<number>>();
    for (const { kept, id } of overwriteEntries(chosen))
      touched.set(kept.name, (touched.get(kept.name) ?? new Set()).add(id));
    await this.options.database.overwrite(await entryWrites(this.options, touched));
    return { overwritten: chosen.length };
  }

  /**
   * The entries the events after `after` touched (themselves and what they changed in passing), and
   * the position they reach; after nothing (0), every entry.
   */
  private async touched(
    after: number,
    batch = this.options.batch ?? 5000,
  ): Promise<{ touched: Map<ResourceName, Set<number>>; position: number }> {
    const { service } = this.options;
    const touched = new Map<ResourceName, Set<number>>();
    const add = (resource: string, id: number) => {
      if (!keptOf(resource as ResourceName)) return;
      const ids = touched.get(resource as ResourceName) ?? new Set<number>();
      touched.set(resource as ResourceName, ids.add(id));
    };
    const head = this.head;
    if (after === 0) {
      for (const kept of KEPT)
        for (const entry of service.state.collections[kept.name].values()) add(kept.name, entry.id);
      return { touched, position: head };
    }
    let count = 0;
    for await (const item of service.changes.changes({ after, before: head + 1, order: 'asc', tokens: false })) {
      // An event that changed no entry (a secret read) has no revision: nothing to write.
      if (item.resource && item.id !== null && item.revision !== null) add(item.resource, item.id);
      for (const effect of item.effects) add(effect.resource, effect.id);
      if (++count >= batch) return { touched, position: item.position };
    }
    return { touched, position: head };
  }
}
