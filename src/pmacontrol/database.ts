import type { Kept, LinkRows, Row } from './rows.js';

/**
 * PmaControl's own database as the wing sees it: its tables, and a table of this service's with the
 * position applied and the lease. The adapter over MariaDB/MySQL is mariadb-tables.ts; `main.ts`
 * makes it, and the projection, drift and commands know only this interface.
 */

/** The service's own table in PmaControl's database. */
export const STATE_TABLE = 'pmacontrol_config_projection';

export interface ProjectionState {
  /** The last position applied; 0: nothing yet (the first batch writes every entry). */
  position: number;
  /** The instance that holds the lease, and until when. */
  holder: string | null;
  leaseUntil: string | null;
  appliedAt: string | null;
}

/** One entry to write (`row`), or to delete (`row` undefined), with its link rows. */
export interface EntryWrite {
  kept: Kept;
  id: number;
  row?: Row;
  links: LinkRows[];
}

export interface PmaControlDatabase {
  /** The position applied and the lease, as committed. */
  state(): Promise<ProjectionState>;
  /** Takes or renews the lease for `leaseMs`; false while another instance holds it. */
  lease(holder: string, leaseMs: number): Promise<boolean>;
  release(holder: string): Promise<void>;
  /**
   * Writes the rows and moves the position to `position`, in one transaction that checks the lease;
   * false (nothing written) when `holder` no longer holds it.
   */
  apply(holder: string, leaseMs: number, position: number, writes: EntryWrite[]): Promise<boolean>;
  /** Writes rows again as given, the position unmoved (drift overwritten). */
  overwrite(writes: EntryWrite[]): Promise<void>;
  /** A table's rows (those of `ids` only, if given). */
  rows(table: string, ids?: number[]): Promise<Row[]>;
  close(): Promise<void>;
}
