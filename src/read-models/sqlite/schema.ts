import { CHANGES_WITHOUT_VERSION, type DiffMember } from '../../../projections/changes.js';
import { GROUP_LEVEL } from '../../engine/merkle.js';

/** Raised when the layout of the tables changes: older read models are dropped and rebuilt from the log. */
export const LAYOUT = 11;

export const TABLES = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (resource TEXT NOT NULL, id INTEGER NOT NULL, doc TEXT NOT NULL,
  PRIMARY KEY (resource, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tombstones (resource TEXT NOT NULL, id INTEGER NOT NULL, version INTEGER NOT NULL,
  created_at TEXT NOT NULL, PRIMARY KEY (resource, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (resource TEXT PRIMARY KEY, last_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS changes (position INTEGER PRIMARY KEY, type TEXT NOT NULL, at TEXT NOT NULL,
  hw_at TEXT, actor TEXT NOT NULL, request_id TEXT NOT NULL, resource TEXT, entry_id INTEGER,
  data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (resource TEXT NOT NULL, entry_id INTEGER NOT NULL, revision INTEGER NOT NULL,
  position INTEGER NOT NULL, diff TEXT, deleted INTEGER NOT NULL, snapshot TEXT,
  PRIMARY KEY (resource, position, entry_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS requests (actor TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
  response TEXT NOT NULL, at TEXT NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (actor, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS list_snapshots (resource TEXT NOT NULL, position INTEGER NOT NULL, id INTEGER NOT NULL,
  doc TEXT NOT NULL, PRIMARY KEY (resource, position, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS list_snapshots_done (resource TEXT NOT NULL, position INTEGER NOT NULL,
  PRIMARY KEY (resource, position)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_nodes (level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL,
  PRIMARY KEY (level, idx)) WITHOUT ROWID;`;

/**
 * A version row's diff as stored: `[[field, before, after], …]`, 40 bytes a row less than the
 * members' JSON with their names (bench/history.ts, read-model files / the event log).
 */
export const encodeDiff = (diff: readonly DiffMember[]): string =>
  JSON.stringify(diff.map((member) => [member.field, member.before, member.after]));

export const decodeDiff = (text: string): DiffMember[] =>
  (JSON.parse(text) as [string, unknown, unknown][]).map(([field, before, after]) => ({ field, before, after }));

/**
 * The levels of the verifiable log's tree kept in \`log_nodes\`: every complete subtree of 16 leaves
 * or more (about 0.07 rows per event). The leaves are the log's own events, hashed again when a proof
 * needs them (at most two groups of 16, read from the store), and the levels between are made from
 * them; a start grows the tree from its right edge, kept in \`meta\` (bench/history.ts, read-model
 * files / the event log: the leaves took 48 bytes an event).
 */
export const storedLevel = (level: number): boolean => level >= GROUP_LEVEL;

/**
 * The change rows found by resource and entry through `changes_named`: those whose entry has no
 * version row at their position (a secret read, a re-seal). Every other change row is found through
 * its entry's version rows (`versions_entry`, or the versions' primary key for a whole resource), so
 * an ordinary change adds no page of an index by entry of its own. The queries repeat this condition
 * word for word, so that SQLite can use the partial index.
 */
export const WITHOUT_VERSION = `type IN (${CHANGES_WITHOUT_VERSION.map((type) => `'${type}'`).join(', ')})`;

/**
 * Indexes in which a new row's key lands at the end of its value's range (one of a few actors or
 * types, then the position): a file filled in bulk keeps them as it is written, work that
 * overlaps the fold, where the saving thread would otherwise wait for it. The change log has no
 * index by time: `hw_at` never decreases along the positions, so a time is found by bisecting the
 * primary key (see SqliteChanges).
 */
export const INDEXES_IN_LOG_ORDER = `
CREATE INDEX IF NOT EXISTS changes_actor ON changes (actor, position);
CREATE INDEX IF NOT EXISTS changes_type ON changes (type, position);`;

/**
 * Indexes of earlier layouts no query uses any more, dropped when a file is opened (nothing to rebuild);
 * `changes_entry` became `changes_named` when BreakGlassUsed joined the events that name an entry
 * without a version row (made again from the rows when a file is opened).
 */
export const RETIRED_INDEXES = `
DROP INDEX IF EXISTS changes_time;
DROP INDEX IF EXISTS changes_entry;
DROP INDEX IF EXISTS versions_position;`;

/**
 * In these, new keys land anywhere (a request, an entry): a file filled in bulk builds them once
 * written, by sorting, which costs less than keeping them.
 */
const INDEXES_BY_KEY = `
CREATE UNIQUE INDEX IF NOT EXISTS versions_entry ON versions (resource, entry_id, revision);
CREATE INDEX IF NOT EXISTS changes_request ON changes (request_id, position);
CREATE INDEX IF NOT EXISTS changes_named ON changes (resource, entry_id, position) WHERE ${WITHOUT_VERSION};
CREATE INDEX IF NOT EXISTS requests_time ON requests (at);`;

/**
 * The indexes the change log's questions use: each filter with the position, so that a page of
 * changes is an index range, whatever the size of the log. Version rows are stored in the order of
 * the log within each resource (a list at a moment reads them as one range); one entry's versions
 * are found through `versions_entry`, which the queries name (INDEXED BY) so that the planner can
 * never trade it for a scan of the whole resource.
 */
export const INDEXES = INDEXES_IN_LOG_ORDER + INDEXES_BY_KEY;
