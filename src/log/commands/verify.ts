import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  Database,
  EventUnreadable,
  type LogReader,
  loadConfig,
  openLogReader,
  Progress,
  readModelsFile,
  UsageError,
} from '../../commands/command.js';
import { redactData } from '../../domain/redact.js';
import type { LoggedEvent } from '../../domain/shared/types.js';
import { Frontier, GROUP_LEVEL } from '../../engine/merkle.js';
import { formatVerifier, parseSigner, parseVerifier, type VerifierKey } from '../../engine/signed-note.js';
import { LOG_KEY_FILE } from '../key.js';
import { type StoredTree, verifyLog } from '../verify.js';

/**
 * The log key's public half: `--public-key FILE`; else from the signing key this DATA_DIR (or
 * CONFIG_LOG_SIGNING_KEY) holds; else the one the log records, which a writer of the store could have
 * replaced: said so.
 */
async function verifierKey(
  publicKeyFile: string | undefined,
  signer: { fromEnv?: string; dataDir: string },
  reader: LogReader,
): Promise<{ key: VerifierKey; from: string }> {
  if (publicKeyFile !== undefined) {
    if (!existsSync(publicKeyFile)) throw new UsageError(`no such public key file: ${publicKeyFile}`);
    try {
      return { key: parseVerifier(readFileSync(publicKeyFile, 'utf8').trim()), from: publicKeyFile };
    } catch (error) {
      throw new UsageError(`${publicKeyFile} does not hold a log's public key: ${(error as Error).message}`);
    }
  }
  const file = join(signer.dataDir, LOG_KEY_FILE);
  if (signer.fromEnv)
    return { key: parseVerifier(formatVerifier(parseSigner(signer.fromEnv))), from: 'CONFIG_LOG_SIGNING_KEY' };
  if (existsSync(file))
    return { key: parseVerifier(formatVerifier(parseSigner(readFileSync(file, 'utf8')))), from: file };
  const recorded = (await reader.read(0, 1000)).find((event) => event.type === 'LogKeyRecorded');
  if (!recorded)
    throw new UsageError(`no log key: give --public-key FILE (${file} is missing, and the log records none)`);
  const verifier = String((recorded.data as Record<string, unknown>).verifier_key);
  return { key: parseVerifier(verifier), from: 'the log itself: a writer of the store could have replaced it' };
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
 * `verify [--checkpoint FILE]... [--from sqlite:FILE | mysql://…] [--public-key FILE]`: reads the
 * whole log in the order of its stored positions — of the configured store, or of a copy `--from`
 * names — writing nothing, makes every leaf and the tree again, and checks each checkpoint given and,
 * beside the service's own read models, its latest. Exit 0 when all hold, else 1, naming what fails
 * and the first position that differs (an event that cannot be read is named by its position).
 */
export async function runVerify(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      checkpoint: { type: 'string', multiple: true },
      from: { type: 'string' },
      'public-key': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`verify takes options only, not ${positionals.join(' ')}`);
  const config = loadConfig();
  const checkpoints = (values.checkpoint ?? []).map((name) => {
    if (!existsSync(name)) throw new UsageError(`no such checkpoint file: ${name}`);
    return { name, note: readFileSync(name, 'utf8') };
  });
  const reader = await openLogReader(config, values.from);
  if (!reader) throw new UsageError('--from must be sqlite:<file> or mysql://user:password@host:port/database');
  // The service's own latest checkpoint is in its read models: compared when verifying its store.
  const stored = values.from === undefined ? storedTree(readModelsFile(config)) : undefined;
  try {
    return await check(reader, checkpoints, stored?.tree, {
      publicKeyFile: values['public-key'],
      signer: { fromEnv: config.logSigningKey, dataDir: config.dataDir },
    });
  } catch (error) {
    if (!(error instanceof EventUnreadable)) throw error;
    console.log(`FAIL the log: ${error.message}`);
    return 1;
  } finally {
    stored?.close();
    await reader.close();
  }
}

async function check(
  reader: LogReader,
  checkpoints: { name: string; note: string }[],
  stored: StoredTree | undefined,
  keys: { publicKeyFile?: string; signer: { fromEnv?: string; dataDir: string } },
): Promise<number> {
  const { key, from } = await verifierKey(keys.publicKeyFile, keys.signer, reader);
  const progress = new Progress('verify');
  progress.note(`log key ${formatVerifier(key)}, from ${from}; reading ${reader.name}`);
  const total = stored?.size ?? 0;
  const result = await verifyLog({
    read: (after, maxCount) => reader.read(after, maxCount),
    key,
    checkpoints,
    stored,
    progress: (events) => progress.update(events, Math.max(total, events)),
  });
  console.log(`${result.events} events, root ${result.root.toString('base64')}`);
  for (const { subject, ok, detail } of result.findings) console.log(`${ok ? 'ok  ' : 'FAIL'} ${subject}: ${detail}`);
  if (!stored) console.log('(no read models of this log here: only the checkpoints given were checked)');
  return result.findings.every((finding) => finding.ok) ? 0 : 1;
}
