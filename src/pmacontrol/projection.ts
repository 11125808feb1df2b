import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { ConfigService, ParseWrite, Principal } from '../application/service.js';
import type { ResourceName } from '../domain/resources.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { PmaControlCrypt } from './crypt.js';
import { Blocked, type PmaControlDatabase, type ProjectionState } from './database.js';
import { DriftKeeper } from './drift-keeper.js';
import { KEPT, keptOf } from './rows.js';
import { nowDatetime, type WriteScope, writeTables } from './table-writes.js';
import { touchedSince } from './touched.js';
import { webserviceUser } from './webservice-users.js';

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
  /**
   * Why the next batch cannot be applied as PmaControl's tables are (rows this service did not
   * write, a unique value another row holds, a value PmaControl cannot store); null when it can. It
   * is retried, never skipped; meanwhile /readyz says not ready with this reason.
   */
  blocked: string | null;
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
  private blocked: string | null = null;
  /** PmaControl's AUTO_INCREMENT by table, as last read (at most every third of a lease): where its next rows go. */
  private nextIds = new Map<string, number>();
  private idsAt = 0;
  private keeper?: DriftKeeper;
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
      blocked: this.blocked,
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
        this.blocked = null;
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
        if (error instanceof Blocked) {
          if (this.blocked !== error.message) {
            this.options.logger.error(
              { reason: error.message },
              "pmacontrol projection: a batch cannot be applied to PmaControl's tables as they are; retrying",
            );
          }
          this.blocked = error.message;
        } else {
          if (!this.down) {
            this.options.logger.warn(
              { err: this.lastError.message },
              "pmacontrol projection: PmaControl's database cannot be written; retrying",
            );
          }
          this.down = true;
        }
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

  /** A user of PmaControl's `webservice_user` table, with its password: the principal of its push jobs, or undefined. */
  webserviceUser(user: string, password: string): Promise<Principal | undefined> {
    return webserviceUser(this.options.database, this.options.crypt, user, password);
  }

  /**
   * Why this instance is not ready: a batch it cannot apply to PmaControl's tables, or undefined. Said
   * without the rows that stop it (names of the inventory): /readyz is open to anyone; the status
   * route, for readers, says which.
   */
  notReady(): string | undefined {
    return this.blocked
      ? "PmaControl's tables cannot take the next batch (GET /fr/api/pmacontrol/status says why)"
      : undefined;
  }

  /** One turn: the lease taken or renewed, then one batch applied if this instance holds it; true if more waits. */
  private async step(): Promise<boolean> {
    const { database, leaseMs } = this.options;
    // Each batch renews the lease in its own transaction: a separate renewal only while idle or waiting.
    if (!this.applying || Date.now() >= this.renewAt) {
      this.applying = await database.lease(this.holder, leaseMs);
      this.known = await database.state();
      await this.readNextIds();
      this.renewAt = Date.now() + leaseMs / 3;
    }
    if (!this.applying) return false;
    if (this.known.position >= this.head) {
      await this.scheduledDrift();
      return false;
    }
    const after = this.known.position;
    const { touched, created, position } = await touchedSince(this.options.service, after, this.head, this.batch);
    const scope: WriteScope = {
      touched,
      first: after === 0,
      fresh: (resource, id) => after === 0 || created.has(`${resource}/${id}`),
    };
    if (!(await database.apply(this.holder, leaseMs, position, (tx) => writeTables(tx, this.writeDeps(), scope)))) {
      this.applying = false;
      return false;
    }
    this.renewAt = Date.now() + leaseMs / 3;
    this.known = { ...this.known, position, holder: this.holder, appliedAt: new Date().toISOString() };
    if (Date.now() >= this.idsAt) await this.readNextIds();
    return position < this.head;
  }

  /** PmaControl's AUTO_INCREMENTs read again (one query of information_schema; not after every batch: bench/pmacontrol.ts). */
  private async readNextIds(): Promise<void> {
    this.nextIds = await this.options.database.nextIds(KEPT.map((kept) => kept.table.table));
    this.idsAt = Date.now() + this.options.leaseMs / 3;
  }

  private writeDeps() {
    const { service, crypt } = this.options;
    return {
      state: service.state,
      open: (sealed: Sealed) => service.write.openSealed(sealed),
      crypt,
      now: nowDatetime(),
    };
  }

  /**
   * The smallest id a new entry of `resource` may take: above the rows PmaControl has made itself
   * (its AUTO_INCREMENT, as last read), so that the service's rows and PmaControl's never meet.
   */
  firstId(resource: string): number {
    const kept = keptOf(resource as ResourceName);
    return kept ? (this.nextIds.get(kept.table.table) ?? 1) : 1;
  }

  /** Once caught up, every `driftMs`: drift looked for, logged and counted when there is some. */
  private async scheduledDrift(): Promise<void> {
    const { driftMs, logger } = this.options;
    if (driftMs === 0 || Date.now() < this.nextDrift) return;
    this.nextDrift = Date.now() + driftMs;
    const { report } = await this.drift.drift();
    this.lastDrift = { count: report.items.length, at: report.checked_at };
    if (report.items.length > 0) {
      logger.warn(
        { differences: report.items.length },
        "pmacontrol drift: PmaControl's tables differ from the configuration",
      );
    }
  }

  /**
   * The entries changed since `position` (`resource/id`): lag, not drift. Before anything was applied
   * (0), nothing: every row is compared, so that a first write held back by rows this service does not
   * know lists them to adopt.
   */
  async changedSince(position: number): Promise<Set<string>> {
    if (position === 0) return new Set();
    const { touched } = await touchedSince(this.options.service, position, this.head, Number.POSITIVE_INFINITY);
    return new Set([...touched].flatMap(([name, ids]) => [...ids.keys()].map((id) => `${name}/${id}`)));
  }

  private get batch(): number {
    return this.options.batch ?? 5000;
  }

  /** Drift: computed once per change of either side, adopted, overwritten (drift-keeper.ts). */
  get drift(): DriftKeeper {
    this.keeper ??= new DriftKeeper({
      ...this.options,
      head: () => this.head,
      changedSince: (position) => this.changedSince(position),
      writeDeps: () => this.writeDeps(),
    });
    return this.keeper;
  }
}
