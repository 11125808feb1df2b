import type BetterSqlite3 from 'better-sqlite3';
import { COLLECTION_NAMES, type CollectionName, type ResourceName } from '../../domain/resources.js';
import { emptyState } from '../../domain/state.js';
import { Frontier, type NodeReader, nodeHash } from '../../engine/merkle.js';
import type { EntryRecord } from '../../engine/table.js';
import type { StoredSnapshot } from '../port.js';
import { CONSISTENT_AT } from './save-jobs.js';
import { storedLevel } from './schema.js';

/**
 * A read-model file read whole: the folded state a start loads, every row as comparable lines and
 * the list snapshots (what `replay` compares), and the nodes of the Merkle tree over the log.
 */

export function readSnapshot(db: BetterSqlite3.Database, meta: (name: string) => string | undefined): StoredSnapshot {
  const state = emptyState();
  const rows = db.prepare<[], { resource: CollectionName; doc: string }>('SELECT resource, doc FROM entries');
  for (const row of rows.iterate()) {
    const entry = JSON.parse(row.doc) as EntryRecord;
    state.collections[row.resource].put(entry.id, entry);
  }
  const buried = db.prepare<[], { resource: CollectionName; id: number; version: number; created_at: string }>(
    'SELECT resource, id, version, created_at FROM tombstones',
  );
  for (const row of buried.iterate()) state.collections[row.resource].bury(row.id, row);
  const counters = db.prepare<[], { resource: CollectionName; last_id: number }>('SELECT * FROM counters').all();
  for (const row of counters) {
    if (COLLECTION_NAMES.includes(row.resource)) state.collections[row.resource].raiseLastId(row.last_id);
  }
  const secretKey = meta('secret_key');
  if (secretKey) state.secretKey = JSON.parse(secretKey);
  const logKey = meta('log_key');
  if (logKey) state.logKey = JSON.parse(logKey);
  state.revision = Number(meta('checkpoint') ?? -1);
  const edge = meta('log_edge');
  const frontier = edge === undefined ? new Frontier() : Frontier.fromEdge(edge);
  if (frontier.size !== state.revision + 1)
    throw new Error(`the tree's edge is at ${frontier.size} events, the read models at ${state.revision + 1}`);
  return { state, digest: meta('checkpoint_digest'), highWaterAt: meta('high_water_at'), frontier };
}

/** Every table in key order, for `lines()` and `differences()`: name, key columns, value columns. */
export const COMPARED: [string, string[], string[]][] = [
  ['meta', ['name'], ['value']],
  ['counters', ['resource'], ['last_id']],
  ['entries', ['resource', 'id'], ['doc']],
  ['tombstones', ['resource', 'id'], ['version', 'created_at']],
  ['changes', ['position'], ['type', 'at', 'hw_at', 'actor', 'request_id', 'resource', 'entry_id', 'data']],
  ['versions', ['resource', 'entry_id', 'revision'], ['position', 'diff', 'deleted', 'snapshot']],
  ['requests', ['actor', 'key'], ['fingerprint', 'at', 'position']],
  ['log_nodes', ['level', 'idx'], ['hex(hash)']],
];

/**
 * The list snapshots' own bookkeeping (`list:*` in meta) is left out: where the snapshots fall
 * depends on how the events were batched. `listSnapshots` gives them for a check by content. So is
 * a rebuild's last consistent point (CONSISTENT_AT).
 */
export function* fileLines(db: BetterSqlite3.Database): Iterable<{ table: string; key: string; value: string }> {
  for (const [table, keys, values] of COMPARED) {
    const columns = [...keys, ...values].join(', ');
    const query = db.prepare(`SELECT ${columns} FROM ${table} ORDER BY ${keys.join(', ')}`);
    for (const row of query.iterate() as Iterable<Record<string, unknown>>) {
      const key = keys.map((k) => row[k]).join('/');
      if (table === 'meta' && (key.startsWith('list:') || key === CONSISTENT_AT)) continue;
      yield { table, key, value: JSON.stringify(values.map((v) => row[v])) };
    }
  }
}

export function* fileListSnapshots(
  db: BetterSqlite3.Database,
): Iterable<{ resource: ResourceName; position: number; entries: EntryRecord[] }> {
  const taken = db.prepare<[], { resource: ResourceName; position: number }>(
    'SELECT resource, position FROM list_snapshots_done ORDER BY resource, position',
  );
  const docs = db.prepare<[string, number], string>(
    'SELECT doc FROM list_snapshots WHERE resource = ? AND position = ? ORDER BY id',
  );
  for (const { resource, position } of taken.all()) {
    yield {
      resource,
      position,
      entries: docs
        .pluck()
        .all(resource, position)
        .map((doc) => JSON.parse(doc)),
    };
  }
}

/**
 * The nodes of the verifiable log's tree as the file keeps them: a level that is not kept
 * (storedLevel) is made from the one below it, down to the leaves, which `leaf` gives (their hashes,
 * made from the log's events: the file keeps none).
 */
export function treeReader(db: BetterSqlite3.Database, leaf: (index: number) => Buffer): NodeReader {
  const stored = db.prepare<[number, number], Buffer>('SELECT hash FROM log_nodes WHERE level = ? AND idx = ?').pluck();
  const node: NodeReader = (level, index) => {
    if (level === 0) return leaf(index);
    if (!storedLevel(level)) return nodeHash(node(level - 1, 2 * index), node(level - 1, 2 * index + 1));
    const hash = stored.get(level, index);
    if (!hash) throw new Error(`the read models hold no node ${level}/${index} of the log's tree`);
    return hash;
  };
  return node;
}
