import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { logged } from '../../application/service.js';
import {
  assertServes,
  Database,
  loadConfig,
  openEventStore,
  Progress,
  readModelsFile,
  UsageError,
} from '../../commands/command.js';
import { redactData } from '../../domain/redact.js';
import { CONFIG_STREAM, type LoggedEvent } from '../../domain/shared/types.js';
import { Frontier, GROUP_LEVEL } from '../../engine/merkle.js';
import { formatVerifier, parseSigner, parseVerifier, type VerifierKey } from '../../engine/signed-note.js';
import { LOG_KEY_FILE } from '../key.js';
import { type StoredTree, verifyLog } from '../verify.js';

/**
 * The log key's public half: from the signing key this DATA_DIR (or CONFIG_LOG_SIGNING_KEY) holds;
 * else the one the log records, which a writer of the store could have replaced: said so.
 */
async function verifierKey(
  fromEnv: string | undefined,
  dataDir: string,
  firstEvents: () => Promise<{ type: string; data: Record<string, unknown> }[]>,
): Promise<{ key: VerifierKey; from: string }> {
  const file = join(dataDir, LOG_KEY_FILE);
  if (fromEnv) return { key: parseVerifier(formatVerifier(parseSigner(fromEnv))), from: 'CONFIG_LOG_SIGNING_KEY' };
  if (existsSync(file))
    return { key: parseVerifier(formatVerifier(parseSigner(readFileSync(file, 'utf8')))), from: file };
  const recorded = (await firstEvents()).find((event) => event.type === 'LogKeyRecorded');
  if (!recorded) throw new UsageError(`no log key: ${file} is missing, and the log records none`);
  return { key: parseVerifier(String(recorded.data.verifier_key)), from: 'the log itself (no key file here)' };
}

interface ChangeRecord {
  type: string;
  at: string;
  actor: string;
  request_id: string;
  resource: string | null;
  data: string;
}

/** Whether the change row the read models made of an event when they folded it is that event's. */
const recordOf = (row: ChangeRecord, event: LoggedEvent) =>
  row.type === event.type &&
  row.at === event.metadata.at &&
  row.actor === event.metadata.actor &&
  row.request_id === event.metadata.request_id &&
  row.data === JSON.stringify(redactData(row.resource ?? undefined, event.data));

/**
 * The tree the service keeps in its read models, read-only; undefined when there are none. A group
 * of events whose subtree differs is told apart event by event with the change rows made of them
 * when they were folded (a change only a secret's sealed value shows, or a bookkeeping event, leaves
 * the group).
 */
export function storedTree(file: string): { tree: StoredTree; close(): void } | undefined {
  if (!existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const edge = db.prepare<[], string>("SELECT value FROM meta WHERE name = 'log_edge'").pluck().get();
  const frontier = edge === undefined ? new Frontier() : Frontier.fromEdge(edge);
  const group = db
    .prepare<[number], Buffer>(`SELECT hash FROM log_nodes WHERE level = ${GROUP_LEVEL} AND idx = ?`)
    .pluck();
  const change = db.prepare<[number], ChangeRecord>(
    'SELECT type, at, actor, request_id, resource, data FROM changes WHERE position = ?',
  );
  const tree: StoredTree = {
    size: frontier.size,
    group: (index) => group.get(index),
    root: frontier.root(),
    locate: (events) => {
      const differs = events.find((event) => {
        const row = change.get(event.revision + 1);
        return row !== undefined && !recordOf(row, event);
      });
      return differs && differs.revision + 1;
    },
  };
  return { tree, close: () => db.close() };
}

/**
 * `verify [--checkpoint FILE]...`: reads the whole log from the store, makes every leaf and the tree
 * again, and checks each checkpoint given and the service's latest (its read models). Exit 0 when all
 * hold, else 1, naming what fails and the first position that differs.
 */
export async function runVerify(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { checkpoint: { type: 'string', multiple: true } },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`verify takes --checkpoint FILE only, not ${positionals.join(' ')}`);
  const config = loadConfig();
  assertServes(config);
  const checkpoints = (values.checkpoint ?? []).map((name) => {
    if (!existsSync(name)) throw new UsageError(`no such checkpoint file: ${name}`);
    return { name, note: readFileSync(name, 'utf8') };
  });
  const store = await openEventStore(config);
  const stored = storedTree(readModelsFile(config));
  const read = async (fromRevision: number, maxCount: number) =>
    (await store.readStream(CONFIG_STREAM, { fromRevision, maxCount })).map(logged);
  try {
    const { key, from } = await verifierKey(config.logSigningKey, config.dataDir, () => read(0, 1000));
    const total = (await store.head(CONFIG_STREAM)) + 1;
    const progress = new Progress('verify');
    progress.note(`log key ${formatVerifier(key)}, from ${from}`);
    const result = await verifyLog({
      read: (fromRevision, maxCount) => store.readStream(CONFIG_STREAM, { fromRevision, maxCount }),
      key,
      checkpoints,
      stored: stored?.tree,
      progress: (events) => progress.update(events, Math.max(total, events)),
    });
    console.log(`${result.events} events, root ${result.root.toString('base64')}`);
    for (const { subject, ok, detail } of result.findings) console.log(`${ok ? 'ok  ' : 'FAIL'} ${subject}: ${detail}`);
    if (!stored) console.log('(no read models in DATA_DIR: only the checkpoints given were checked)');
    return result.findings.every((finding) => finding.ok) ? 0 : 1;
  } finally {
    stored?.close();
    await store.close();
  }
}
