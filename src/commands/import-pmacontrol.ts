import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import {
  createPmaControlCrypt,
  PmaControlCryptError,
  readPmaControlCryptKey,
} from '../application/pmacontrol-crypt.js';
import type { ImportCounts } from '../application/transfer.js';
import type { ResourceName } from '../domain/resources.js';
import { type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import { importInto, parseImportDocument } from '../schemas/import-document.js';
import { WriteValidator } from '../schemas/validator.js';
import { UsageError } from './catalog.js';
import { countsLine, withCliService } from './cli-service.js';
import {
  type Decrypt,
  documentFromTables,
  type PmaControlTables,
  type Row,
  type RowProblem,
  TABLE_OF,
  TABLES,
} from './pmacontrol-tables.js';
import { Progress } from './progress.js';

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

function printProblems(problems: RowProblem[]): void {
  console.error(`${problems.length} problems:`);
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
    },
  });
  if (!values.from || !/^(mysql|mariadb):\/\/[^/]+\/[^/?#]+/.test(values.from)) {
    throw new UsageError('import-pmacontrol needs --from mysql://user:password@host:port/database');
  }
  const keyFile = values['crypt-key-file'] ?? process.env.PMACONTROL_CRYPT_KEY_FILE;
  return { from: values.from.replace(/^mariadb:/, 'mysql:'), keyFile, dryRun: values['dry-run'] ?? false };
}

/**
 * `import-pmacontrol`: reads a PmaControl database, maps its rows to this service's entries (ids kept,
 * secrets opened with PmaControl's key, then sealed), and imports them all in one append under the
 * actor `import-pmacontrol`, or nothing. A dry run prints the counts and every problem.
 */
export async function runImportPmaControl(args: string[]): Promise<number> {
  const { from, keyFile, dryRun } = parseOptions(args);
  const progress = new Progress('import-pmacontrol');
  const decrypt = decrypter(keyFile);
  // The rows are not kept once mapped: on 100,000 servers they are a large share of the peak memory.
  const { document, problems: secretProblems } = documentFromTables(await readTables(from, progress), decrypt);
  return withCliService(async (service) => {
    const { items, problems } = parseImportDocument(document, importInto(service, new WriteValidator()));
    progress.note(`${items.length} entries mapped; deciding them`);
    const caller = { actor: 'import-pmacontrol', requestId: randomUUID() };
    let counts: ImportCounts | undefined;
    let refused: FieldError[] = [];
    try {
      // A secret that did not open refuses the import: it is then decided as a dry run, for its other problems.
      const checkOnly = dryRun || secretProblems.length > 0;
      // Run on the host that holds the key: the CLI may compare secrets (and the comparison is recorded).
      counts = await service.write.importEntries(items, caller, { dryRun: checkOnly, secretsRight: true, problems });
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      refused = error.errors;
    }
    const found = dedupe([...secretProblems, ...rowProblems(refused, document)], secretProblems);
    if (found.length > 0 || !counts) {
      printProblems(found);
      console.error(dryRun ? 'dry run: nothing recorded' : 'nothing was imported');
      return 1;
    }
    console.log(countsLine(counts, dryRun));
    return 0;
  });
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
