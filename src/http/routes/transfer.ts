import type { Context } from 'koa';
import type { Moment } from '../../application/changes.js';
import type { ConfigService } from '../../application/service.js';
import type { Principal } from '../../application/tokens.js';
import { type ExportProgress, exportPieces } from '../../application/transfer.js';
import { type ResourceName, resourceOf } from '../../domain/resources.js';
import type { EntryRecord } from '../../engine/table.js';
import type { WriteValidator } from '../../schemas/validator.js';
import { assertJsonBody } from '../body.js';
import { readDocument } from '../document-stream.js';
import { invalidQuery } from '../errors.js';
import { authorize } from '../identity.js';
import { importInto, parseImportDocument } from '../import-document.js';
import { entryJson } from '../list-body.js';
import { parseMoment } from '../moments.js';
import { pacedBody } from '../paced.js';
import { singleParameters } from '../request.js';
import { callerOf } from '../writes.js';

/**
 * An import document is read as a stream (http/document-stream.ts), within these bounds: 100,000
 * servers make about 60 MB. Larger inventories go through the CLI (`pmacontrol-config import`),
 * which reads a file.
 */
export const IMPORT_BOUNDS = { totalBytes: 64 * 1024 * 1024, entryChars: 256 * 1024, entries: 200_000 };

/** An entry as GET shows it, plus each of its secrets sealed (`passwd_sealed`) when asked for. */
export function exportedEntry(resource: ResourceName, entry: EntryRecord, sealed: boolean): string {
  const json = entryJson(resource, entry);
  if (!sealed) return json;
  const secrets = resourceOf(resource)
    .secretFields.filter((field) => typeof entry[field] === 'string')
    .map((field) => `,${JSON.stringify(`${field}_sealed`)}:${JSON.stringify(entry[field])}`);
  return secrets.length > 0 ? `${json.slice(0, -1)}${secrets.join('')}}` : json;
}

/** The export document, piece by piece, each entry as GET shows it (and its sealed secrets if asked). */
export const exportDocument = (
  service: ConfigService,
  moment: Moment | undefined,
  sealed: boolean,
  progress?: ExportProgress,
): AsyncIterable<string> =>
  exportPieces(service, moment, (resource, entry) => exportedEntry(resource, entry, sealed), progress);

/** What `?at=` and `?secrets=sealed` ask of an export; sealed secrets are for admins. */
export function parseExportQuery(ctx: Context): { moment?: Moment; sealed: boolean } {
  const { at, secrets } = singleParameters(ctx, ['at', 'secrets']);
  if (secrets !== undefined && secrets !== 'sealed') {
    throw invalidQuery('query parameter "secrets" takes one value: sealed');
  }
  const sealed = secrets === 'sealed';
  if (sealed) authorize(ctx.state.principal, 'admin');
  return { ...(at !== undefined ? { moment: parseMoment('at', at) } : {}), sealed };
}

/** `GET /fr/api/export`: streamed, so that a large inventory neither holds the event loop nor sits in memory. */
export function exportConfiguration(ctx: Context, service: ConfigService): void {
  const { moment, sealed } = parseExportQuery(ctx);
  ctx.type = 'application/json';
  ctx.body = pacedBody(exportDocument(service, moment, sealed));
}

/** `POST /fr/api/import` (admin): all or nothing, every problem listed; `?dry_run=true` checks only. */
export async function importConfiguration(ctx: Context, service: ConfigService, validator: WriteValidator) {
  const { dry_run: dryRun = 'false' } = singleParameters(ctx, ['dry_run']);
  if (dryRun !== 'true' && dryRun !== 'false') throw invalidQuery('query parameter "dry_run" is true or false');
  assertJsonBody(ctx, IMPORT_BOUNDS.totalBytes);
  const document = await readDocument(ctx.req, IMPORT_BOUNDS).catch((error) => {
    ctx.set('Connection', 'close'); // what the client still sends of a refused body is not read
    throw error;
  });
  const { items, problems } = parseImportDocument(document, importInto(service, validator));
  const secretsRight = (ctx.state.principal as Principal).secrets;
  const options = { dryRun: dryRun === 'true', secretsRight, problems };
  const counts = await service.write.importEntries(items, callerOf(ctx), options);
  ctx.body = { ...counts, dry_run: dryRun === 'true' };
}
