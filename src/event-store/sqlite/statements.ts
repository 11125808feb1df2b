// The log's one table in SQLite and the statements the store asks of it (see store.ts).
import type BetterSqlite3 from 'better-sqlite3';
import type { RecordedEvent } from '../port.js';

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position    INTEGER PRIMARY KEY AUTOINCREMENT,
  stream      TEXT    NOT NULL,
  revision    INTEGER NOT NULL,
  type        TEXT    NOT NULL,
  data        TEXT    NOT NULL,
  metadata    TEXT    NOT NULL,
  recorded_at TEXT    NOT NULL,
  UNIQUE (stream, revision)
);`;

/** The columns an event is read with, as a raw row (an array: cheaper to make than an object per row). */
const COLUMNS = 'position, stream, revision, type, data, metadata';
type Row = [position: number, stream: string, revision: number, type: string, data: string, metadata: string];

export const toRecorded = ([position, stream, revision, type, data, metadata]: Row): RecordedEvent => ({
  stream,
  revision,
  position,
  type,
  data: JSON.parse(data),
  metadata: JSON.parse(metadata),
});

/** The store's statements, prepared once on its connection. */
export function statementsOf(db: BetterSqlite3.Database) {
  return {
    head: db.prepare<[string], { revision: number | null }>(
      'SELECT MAX(revision) AS revision FROM events WHERE stream = ?',
    ),
    insert: db.prepare(
      'INSERT INTO events (stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    stream: db
      .prepare<[string, number, number], Row>(
        `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`,
      )
      .raw(),
    streamBefore: db
      .prepare<[string, number, number, number], Row>(
        `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? AND +position < ? ORDER BY revision LIMIT ?`,
      )
      .raw(),
    // A range of positions (the table's own key), whatever the stream's length.
    positionsFrom: db
      .prepare<[number, string, number], number>(
        'SELECT position FROM events WHERE position >= ? AND +stream = ? AND +revision >= ? LIMIT 10000',
      )
      .pluck(),
    headBefore: db.prepare<[string, number], { revision: number }>(
      'SELECT revision FROM events WHERE stream = ? AND +position < ? ORDER BY revision DESC LIMIT 1',
    ),
    all: db
      .prepare<[number, number], Row>(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`)
      .raw(),
  };
}
