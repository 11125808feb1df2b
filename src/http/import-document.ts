import type { ConfigService } from '../application/service.js';
import { EXPORT_FORMAT, IMPORT_ORDER, type ImportItem, itemPath } from '../application/transfer.js';
import { isConfigurationName, type ResourceName, resourceOf } from '../domain/resources.js';
import { type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { WriteValidator } from '../schemas/validator.js';

/** What reading an import document needs to know about the service it goes into. */
export interface DocumentContext {
  validator: WriteValidator;
  /** Whether the entry exists now: it is then replaced (PUT rules), else created (POST rules). */
  exists(resource: ResourceName, id: number): boolean;
  /** The plain text of a `<secret>_sealed` value, if it was sealed under this service's key. */
  openSealed(sealed: string): string | undefined;
}

/** An import into a running service: its entries now, and its key for sealed secrets. */
export const importInto = (service: ConfigService, validator: WriteValidator): DocumentContext => ({
  validator,
  exists: (resource, id) => service.state.collections[resource].get(id) !== undefined,
  openSealed: (sealed) => service.write.openSealed(sealed),
});

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const problem = (field: string, code: string, message: string): FieldError => ({ field, code, message });

/**
 * Reads an export document (section 11) into the entries to import, in the order they can be
 * written (every resource after the ones it references), and the problems of the entries that could
 * not be read, with paths such as `resources.servers[3].ip`: the import lists them with the problems
 * it finds deciding the others. A document that is not an export at all is refused at once.
 */
export function parseImportDocument(
  document: Body,
  context: DocumentContext,
): { items: ImportItem[]; problems: FieldError[] } {
  const problems: FieldError[] = [];
  if (document.format !== EXPORT_FORMAT) {
    problems.push(problem('format', 'invalid_value', `must be "${EXPORT_FORMAT}", as an export gives it`));
  }
  const resources = document.resources;
  if (!isObject(resources)) {
    problems.push(problem('resources', 'invalid_type', 'must be an object of lists, one per resource'));
  }
  if (problems.length > 0 || !isObject(resources)) throw new ValidationFailed(problems, { listAll: true });
  const items: ImportItem[] = [];
  for (const [name, list] of Object.entries(resources)) {
    if (!isConfigurationName(name)) {
      problems.push(problem(`resources.${name}`, 'unknown_resource', 'is not a resource of this service'));
    } else if (!Array.isArray(list)) {
      problems.push(problem(`resources.${name}`, 'invalid_type', 'must be a list of entries'));
    } else {
      items.push(...readList(name, list, context, problems));
    }
  }
  const rank = (item: ImportItem) => IMPORT_ORDER.indexOf(item.resource);
  return { items: items.sort((a, b) => rank(a) - rank(b)), problems };
}

function readList(resource: ResourceName, list: unknown[], context: DocumentContext, problems: FieldError[]) {
  const items: ImportItem[] = [];
  const seen = new Set<number>();
  list.forEach((entry, index) => {
    const path = itemPath(resource, index);
    if (!isObject(entry)) {
      problems.push(problem(path, 'invalid_type', 'must be an entry object'));
      return;
    }
    const id = entry.id;
    if (!Number.isSafeInteger(id) || (id as number) < 1) {
      problems.push(problem(`${path}.id`, 'invalid_id', 'must be the entry id, an integer from 1 to 2^53-1'));
      return;
    }
    if (seen.has(id as number)) {
      problems.push(problem(`${path}.id`, 'duplicate_id', `id ${id} is given twice in ${resource}`));
      return;
    }
    seen.add(id as number);
    const item = readEntry(resource, index, id as number, { ...entry }, context, problems);
    if (item) items.push(item);
  });
  return items;
}

function readEntry(
  resource: ResourceName,
  index: number,
  id: number,
  body: Body,
  context: DocumentContext,
  problems: FieldError[],
): ImportItem | undefined {
  const path = itemPath(resource, index);
  const before = problems.length;
  openSealedSecrets(resource, body, path, context, problems);
  const soft = resourceOf(resource).declaration.deletion === 'soft';
  let deleted: boolean | undefined;
  if (soft && Object.hasOwn(body, 'is_deleted')) {
    deleted = body.is_deleted === true || body.is_deleted === 1;
    delete body.is_deleted;
  }
  const exists = context.exists(resource, id);
  try {
    const parsed = context.validator.parse(resource, exists ? 'replace' : 'create', body, id);
    if (problems.length > before) return undefined;
    return { resource, index, id, input: parsed.input as Body, ...(deleted !== undefined ? { deleted } : {}) };
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    for (const e of error.errors) problems.push({ ...e, field: `${path}.${e.field}` });
    return undefined;
  }
}

/** `<secret>_sealed` (an export with `secrets=sealed`) becomes the secret, if this service's key opens it. */
function openSealedSecrets(
  resource: ResourceName,
  body: Body,
  path: string,
  context: DocumentContext,
  problems: FieldError[],
) {
  for (const field of resourceOf(resource).secretFields) {
    const name = `${field}_sealed`;
    if (!Object.hasOwn(body, name)) continue;
    const sealed = body[name];
    delete body[name];
    const plain = typeof sealed === 'string' ? context.openSealed(sealed) : undefined;
    if (Object.hasOwn(body, field)) {
      problems.push(problem(`${path}.${name}`, 'duplicate_field', `is given with ${field}; send one of them`));
    } else if (plain === undefined) {
      problems.push(
        problem(`${path}.${name}`, 'sealed_elsewhere', "was not sealed under this service's CONFIG_SECRET_KEY"),
      );
    } else {
      body[field] = plain;
    }
  }
}
