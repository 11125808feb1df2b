import { once } from 'node:events';
import { createWriteStream, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { parseMoment } from '../http/moments.js';
import { exportDocument } from '../http/routes/transfer.js';
import { UsageError } from './catalog.js';
import { countsLine, withCliService } from './cli-service.js';
import { readImportDocument } from './command.js';
import { Progress } from './progress.js';
import { cliCaller } from './token.js';

async function writeAll(out: Writable, pieces: AsyncIterable<string>): Promise<void> {
  for await (const piece of pieces) {
    if (!out.write(piece)) await once(out, 'drain');
  }
}

export async function runExport(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { at: { type: 'string' }, secrets: { type: 'string' }, out: { type: 'string' } },
  });
  if (values.secrets !== undefined && values.secrets !== 'sealed')
    throw new UsageError('--secrets takes one value: sealed');
  let moment: ReturnType<typeof parseMoment> | undefined;
  try {
    moment = values.at === undefined ? undefined : parseMoment('--at', values.at);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return withCliService(async (service) => {
    const progress = new Progress('export');
    const pieces = exportDocument(service, moment, values.secrets === 'sealed', (done, total) =>
      progress.update(done, total),
    );
    if (values.out === undefined) {
      await writeAll(process.stdout, pieces);
      return 0;
    }
    const file = createWriteStream(values.out, { mode: 0o600 });
    await writeAll(file, pieces);
    file.end();
    await once(file, 'finish');
    return 0;
  });
}

function readDocument(path: string): Record<string, unknown> {
  const text = readFileSync(path === '-' ? 0 : path, 'utf8');
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not a JSON document`);
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new UsageError(`${path} is not a JSON object`);
  }
  return document as Record<string, unknown>;
}

export async function runImport(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'dry-run': { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1) throw new UsageError('import needs one FILE (or - for stdin)');
  const progress = new Progress('import');
  const document = readDocument(positionals[0]);
  progress.note(`read ${positionals[0]}`);
  return withCliService(async (service) => {
    const { items, problems } = readImportDocument(service, document);
    progress.note(`${items.length} entries read, ${problems.length} problems so far; deciding them`);
    const dryRun = values['dry-run'] ?? false;
    const options = { dryRun, secretsRight: true, problems }; // the host's CLI may compare secrets
    console.log(countsLine(await service.write.importEntries(items, cliCaller(), options), dryRun));
    return 0;
  });
}
