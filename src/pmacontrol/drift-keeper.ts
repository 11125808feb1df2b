import type { Caller, ConfigService, ParseWrite } from '../application/service.js';
import { type DomainError, type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { PmaControlCrypt } from './crypt.js';
import type { PmaControlDatabase } from './database.js';
import {
  adoptRequests,
  type Drift,
  type DriftDeps,
  type DriftSelection,
  findDrift,
  overwriteEntries,
  selected,
} from './drift.js';
import { KEPT } from './rows.js';
import { type Touched, type WriteDeps, type WriteScope, writeTables } from './table-writes.js';

/**
 * Drift as the routes and the projection's scheduled look ask for it: computed once per change of
 * either side — the log's head, the position applied, a fingerprint of PmaControl's rows (one query)
 * — and shared by every reader until the next; PmaControl's ciphertexts opened once and remembered.
 * Adopt and overwrite act on the chosen differences only.
 */

export interface DriftKeeperDeps {
  service: ConfigService;
  database: PmaControlDatabase;
  crypt: PmaControlCrypt;
  parse: ParseWrite;
  /** The position of the log's last event. */
  head(): number;
  /** The entries changed since a position (lag, not drift). */
  changedSince(position: number): Promise<Set<string>>;
  writeDeps(): WriteDeps;
}

/** Ciphertexts remembered opened at most (then forgotten all at once): about 40 MB. */
const MAX_REMEMBERED = 200_000;

/** The columns drift compares, by table (link tables: their two ids): what its fingerprint covers. */
const FINGERPRINTED: Record<string, string[]> = Object.fromEntries(
  KEPT.flatMap((kept) => {
    const columns = Object.keys(kept.resource.declaration.fields).filter((field) => !kept.table.links?.[field]);
    const own = [
      ...columns,
      ...(kept.table.cryptedColumn ? [kept.table.cryptedColumn] : []),
      ...(kept.resource.declaration.deletion === 'soft' ? ['is_deleted'] : []),
    ];
    const links = Object.values(kept.table.links ?? {}).map((link) => [link.table, [link.owner, link.target]]);
    return [[kept.table.table, own], ...links];
  }),
);

export class DriftKeeper {
  private readonly opened = new Map<string, string>();
  private driftCache?: { key: string; drift: Promise<Drift> };
  private keying?: Promise<string>;

  constructor(private readonly deps: DriftKeeperDeps) {}

  private get driftDeps(): DriftDeps {
    const { service, database, changedSince } = this.deps;
    const decrypt = (ciphertext: string) => this.decrypt(ciphertext);
    return { service, database, decrypt, changedSince };
  }

  /** PmaControl's ciphertexts opened, remembered: drift opens every password each time, and they seldom change. */
  private decrypt(ciphertext: string): string {
    const known = this.opened.get(ciphertext);
    if (known !== undefined) return known;
    const plain = this.deps.crypt.decrypt(ciphertext);
    if (this.opened.size >= MAX_REMEMBERED) this.opened.clear();
    this.opened.set(ciphertext, plain);
    return plain;
  }

  /**
   * Where both sides stand, in a few bytes: the log's head, the position applied and a fingerprint of
   * PmaControl's rows (one query). Readers that ask at once share one look.
   */
  private driftKey(): Promise<string> {
    this.keying ??= (async () => {
      const head = this.deps.head();
      const { position } = await this.deps.database.state();
      return `${head}/${position}/${await this.deps.database.fingerprint(FINGERPRINTED)}`;
    })().finally(() => {
      this.keying = undefined;
    });
    return this.keying;
  }

  /**
   * What PmaControl's tables say that the configuration does not: computed once per change of
   * either side, and shared by every reader until the next (bench/pmacontrol.ts, drift at 12,000
   * servers).
   */
  async drift(): Promise<Drift> {
    const key = await this.driftKey();
    if (this.driftCache?.key === key) return this.driftCache.drift;
    const drift = findDrift(this.driftDeps, this.deps.parse);
    const cached = { key, drift };
    this.driftCache = cached;
    drift.catch(() => {
      if (this.driftCache === cached) this.driftCache = undefined;
    });
    return drift;
  }

  /** The next look at drift computes it again (after an overwrite). */
  private invalidate(): void {
    this.driftCache = undefined;
  }

  /** The chosen differences recorded as changes, under `caller` (actor `pmacontrol`), all or none. */
  async adopt(selection: DriftSelection, caller: Caller): Promise<{ adopted: number; events: number }> {
    const drift = await this.drift();
    const chosen = selected(drift.report, selection);
    const { requests, problems } = adoptRequests(drift, chosen);
    const events = await this.deps.service.write.batch((batch) => {
      // Each write decided on its own, so that every refusal is listed; then all of them stand, or none.
      for (const { request, where } of requests) {
        const refusal = batch.unit(() => batch.apply(request));
        if (refusal) problems.push(...problemsAt(where, refusal));
      }
      if (problems.length > 0) {
        batch.discard();
        throw new ValidationFailed(problems, { listAll: true });
      }
      return batch.size;
    }, caller);
    return { adopted: chosen.length, events };
  }

  /** The chosen rows written again as the configuration has them (a row it does not have: deleted). */
  async overwrite(selection: DriftSelection): Promise<{ overwritten: number }> {
    const drift = await this.drift();
    const chosen = selected(drift.report, selection);
    const touched: Touched = new Map();
    for (const { kept, id, columns } of overwriteEntries(chosen)) {
      const ids = touched.get(kept.name) ?? new Map<number, ReadonlySet<string> | null>();
      touched.set(kept.name, ids.set(id, columns));
    }
    const scope: WriteScope = { touched, first: false, fresh: () => false };
    await this.deps.database.overwrite((tx) => writeTables(tx, this.deps.writeDeps(), scope));
    this.invalidate();
    return { overwritten: chosen.length };
  }
}

/** A refusal of the write of one row, as problems at that row (`tag/5.name`). */
function problemsAt(where: string, refusal: DomainError): FieldError[] {
  if (refusal instanceof ValidationFailed) {
    return refusal.errors.map((e) => ({ ...e, field: `${where}${e.field ? `.${e.field}` : ''}` }));
  }
  return [{ field: where, code: refusal.code, message: refusal.message }];
}
