import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import {
  assertServes,
  countsLine,
  type ImportCounts,
  loadConfig,
  Progress,
  readImportDocument,
  UsageError,
  withCliService,
} from '../../commands/command.js';
import type { ResourceName } from '../../domain/resources.js';
import { type FieldError, ValidationFailed } from '../../domain/shared/errors.js';
import { createPmaControlCrypt, PmaControlCryptError, readPmaControlCryptKey } from '../crypt.js';
import {
  type Decrypt,
  documentFromTables,
  type PmaControlTables,
  type Row,
  type RowProblem,
  TABLE_OF,
  TABLES,
} from '../tables.js';

/** Reads PmaControl's tables; one that does not exist (an older PmaControl) is read as empty and said so. */
async function readTables(url: string, progress: Progress): Promise<PmaControlTables> {
  const connection = await createConnection({ uri: url, connectTimeout: 10_000, dateStrings: true });
  try {
    const tables = {} as PmaControlTables;
    for (const table of TABLES) {
      const [exists] = (await connection.query('SHOW TABLES LIKE ?', [table])) as unknown as [Row[]];
      if (exists.length === 0) {
        progress.note(`table ${table} does not exist: read as empty`);
        tables[table] = [];
        continue;
      }
      const [rows] = (await connection.query(`SELECT * FROM \`${table}\` ORDER BY 1`)) as unknown as [Row[]];
      tables[table] = rows;
      progress.note(`${table}: ${rows.length} rows`);
    }
    return tables;
  } finally {
    await connection.end();
  }
}

/** The opener of PmaControl's ciphertexts, or one that says the key is missing. */
function decrypter(keyFile: string | undefined): Decrypt {
  if (!keyFile) {
    return () => {
      throw new PmaControlCryptError("is stored encrypted; give PmaControl's key with --crypt-key-file");
    };
  }
  let crypt: ReturnType<typeof createPmaControlCrypt>;
  try {
    crypt = createPmaControlCrypt(readPmaControlCryptKey(keyFile));
  } catch (error) {
    throw new UsageError(`the PmaControl key file ${keyFile} cannot be used: ${(error as Error).message}`);
  }
  return (ciphertext) => crypt.decrypt(ciphertext);
}

/** The import's problems (`resources.servers[3].ip`) said as PmaControl's table and row id. */
function rowProblems(problems: FieldError[], document: { resources: Record<ResourceName, Row[]> }): RowProblem[] {
  return problems.map(({ field, message }) => {
    const match = /^resources\.([a-z-]+)\[(\d+)\](?:\.(.+))?$/.exec(field);
    if (!match) return { table: '-', id: '-', field, message };
    const resource = match[1] as ResourceName;
    const row = document.resources[resource]?.[Number(match[2])];
    return { table: TABLE_OF[resource] ?? resource, id: row?.id, field: match[3] ?? '', message };
  });
}

function printProblems(problems: RowProblem[], heading: string): void {
  console.error(`${problems.length} ${heading}:`);
  for (const p of problems)
    console.error(`  ${p.table} id=${String(p.id)}${p.field ? ` ${p.field}` : ''}: ${p.message}`);
}

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      from: { type: 'string' },
      'crypt-key-file': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      'skip-invalid': { type: 'boolean', default: false },
      report: { type: 'string' },
    },
  });
  if (!values.from || !/^(mysql|mariadb):\/\/[^/]+\/[^/?#]+/.test(values.from)) {
    throw new UsageError('import-pmacontrol needs --from mysql://user:password@host:port/database');
  }
  const skipInvalid = values['skip-invalid'] ?? false;
  if (values.report !== undefined && !skipInvalid) throw new UsageError('--report goes with --skip-invalid');
  const keyFile = values['crypt-key-file'] ?? loadConfig().pmacontrolCryptKeyFile;
  const from = values.from.replace(/^mariadb:/, 'mysql:');
  return { from, keyFile, dryRun: values['dry-run'] ?? false, skipInvalid, report: values.report };
}

/** The rows a problem was found in before the import's own checks: left out with --skip-invalid. */
function withoutRows(resources: Record<ResourceName, Row[]>, problems: RowProblem[]): void {
  for (const [name, rows] of Object.entries(resources) as [ResourceName, Row[]][]) {
    const table = TABLE_OF[name];
    const bad = new Set(problems.filter((p) => p.table === table).map((p) => String(p.id)));
    if (bad.size > 0) resources[name] = rows.filter((row) => !bad.has(String(row.id)));
  }
}

/**
 * `import-pmacontrol`: reads a PmaControl database, maps its rows to this service's entries (ids kept,
 * values PmaControl encrypted opened, secrets then sealed), and imports them all in one append under
 * the actor `import-pmacontrol`, or nothing: every problem is listed. With --skip-invalid, every row
 * the service accepts is imported and each row left out is reported with why (on stderr, and as JSON
 * in --report FILE). A dry run prints the counts and the problems, and records nothing.
 */
export async function runImportPmaControl(args: string[]): Promise<number> {
  const { from, keyFile, dryRun, skipInvalid, report } = parseOptions(args);
  // Refused before PmaControl's tables are read: a DATA_DIR that is not the service's.
  assertServes(loadConfig());
  const progress = new Progress('import-pmacontrol');
  const decrypt = decrypter(keyFile);
  // The rows are not kept once mapped: on 100,000 servers they are a large share of the peak memory.
  const { document, problems: rowFound } = documentFromTables(await readTables(from, progress), decrypt);
  if (skipInvalid) withoutRows(document.resources, rowFound);
  return withCliService(async (service) => {
    const { items, problems } = readImportDocument(service, document);
    progress.note(`${items.length} entries mapped; deciding them`);
    const caller = { actor: 'import-pmacontrol', requestId: randomUUID() };
    let counts: ImportCounts | undefined;
    let refused: FieldError[] = [];
    try {
      // A value that did not open refuses the import: it is then decided as a dry run, for its other problems.
      const checkOnly = dryRun || (!skipInvalid && rowFound.length > 0);
      // Run on the host that holds the key: the CLI may compare secrets (and the comparison is recorded).
      const options = { dryRun: checkOnly, secretsRight: true, problems, skipInvalid };
      counts = await service.write.importEntries(items, caller, options);
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      refused = error.errors;
    }
    if (skipInvalid && counts) {
      const skipped = [...rowFound, ...rowProblems(counts.skipped ?? [], document)];
      if (skipped.length > 0) printProblems(skipped, 'rows skipped');
      if (report) writeReport(report, counts, skipped, dryRun);
      console.log(`${countsLine(counts, dryRun)}; ${skipped.length} skipped`);
      return 0;
    }
    const found = dedupe([...rowFound, ...rowProblems(refused, document)], rowFound);
    if (found.length > 0 || !counts) {
      printProblems(found, 'problems');
      console.error(dryRun ? 'dry run: nothing recorded' : 'nothing was imported');
      return 1;
    }
    console.log(countsLine(counts, dryRun));
    return 0;
  });
}

/** The report of an import with --skip-invalid, as JSON: the counts and each row skipped with why. */
function writeReport(file: string, counts: ImportCounts, skipped: RowProblem[], dryRun: boolean): void {
  const { created, updated, unchanged } = counts;
  const body = { dry_run: dryRun, created, updated, unchanged, skipped };
  writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
}

/** The problems, each once; a row whose secret did not open is not also said to lack it. */
function dedupe(problems: RowProblem[], secretProblems: RowProblem[]): RowProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.table}/${String(p.id)}/${p.field}/${p.message}`;
    const secretAgain = secretProblems.some(
      (s) => s !== p && s.table === p.table && s.id === p.id && s.field === p.field,
    );
    if (seen.has(key) || secretAgain) return false;
    seen.add(key);
    return true;
  });
}
