import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { Resource } from '../domain/shared/types.js';
import { isHost, MAX_ID, own } from './fields.js';
import type { ResourceSchema } from './resource.js';
import { SCHEMAS } from './resources.js';
import { type WriteMode, writeSchema } from './write.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export function createAjv(options: { useDefaults?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: options.useDefaults ?? false });
  addFormats(ajv);
  ajv.addFormat('host', { type: 'string', validate: isHost });
  return ajv;
}

export interface ParsedWrite {
  /** POST: the id asked for, if any. */
  id?: number;
  fields: Record<string, unknown>;
  /** PATCH `{"is_deleted": false}` on a server. */
  restore?: boolean;
}

const CODES: Record<string, string> = {
  required: 'required',
  type: 'invalid_type',
  minLength: 'too_short',
  maxLength: 'too_long',
  pattern: 'invalid_format',
  format: 'invalid_format',
  enum: 'invalid_value',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  maxItems: 'too_many',
  additionalProperties: 'unknown_field',
};

function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const byField = new Map<string, FieldError>();
  for (const error of errors) {
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    const field =
      params.missingProperty ??
      params.additionalProperty ??
      error.instancePath
        .split('/')
        .slice(1)
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .join('.');
    const message =
      error.keyword === 'additionalProperties'
        ? 'is not a field of this resource'
        : error.keyword === 'required'
          ? 'is required'
          : (error.message ?? 'is invalid');
    if (!byField.has(field)) byField.set(field, { field, code: CODES[error.keyword] ?? 'invalid', message });
  }
  return [...byField.values()];
}

const fail = (field: string, code: string, message: string): FieldError => ({ field, code, message });

/** Validates write bodies against the resources' schemas, compiled once. */
export class WriteValidator {
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    const ajv = createAjv({ useDefaults: true });
    for (const schema of Object.values(SCHEMAS)) {
      for (const mode of ['create', 'replace', 'patch'] as const) {
        this.compiled.set(`${schema.resource}/${mode}`, ajv.compile(writeSchema(schema, mode)));
      }
    }
  }

  parse(resource: Resource, mode: WriteMode, body: Record<string, unknown>, pathId?: number): ParsedWrite {
    const schema = SCHEMAS[resource];
    const errors: FieldError[] = [];
    const input = resolveAliases(schema, body, errors);
    const parsed: ParsedWrite = { fields: input };
    setAsideReadOnly(schema, mode, input, parsed, errors, pathId);
    normalise(schema, input);
    setAsideLongArrays(schema, input, errors);
    const validate = this.compiled.get(`${resource}/${mode}`)!;
    if (!validate(input)) for (const error of toFieldErrors(validate.errors ?? [])) errors.push(error);
    if (errors.length > 0) throw new ValidationFailed(errors);
    if (mode === 'create' && input.id !== undefined) {
      parsed.id = input.id as number;
      delete input.id;
    }
    if (Array.isArray(input.tags)) input.tags = [...new Set(input.tags as number[])].sort((a, b) => a - b);
    return parsed;
  }
}

function resolveAliases(
  schema: ResourceSchema,
  body: Record<string, unknown>,
  errors: FieldError[],
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...body };
  const move = (alias: string, field: string, value: unknown) => {
    if (field in input) errors.push(fail(alias, 'duplicate_field', `is an alias of ${field}, which is also given`));
    else input[field] = value;
  };
  for (const [alias, field] of Object.entries(schema.aliases ?? {})) {
    if (!(alias in input)) continue;
    move(alias, field, input[alias]);
    delete input[alias];
  }
  for (const [alias, parts] of Object.entries(schema.objectAliases ?? {})) {
    if (!(alias in input)) continue;
    const value = input[alias];
    delete input[alias];
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push(fail(alias, 'invalid_type', `must be an object with ${Object.keys(parts).join(', ')}`));
      continue;
    }
    for (const [key, part] of Object.entries(value as Record<string, unknown>)) {
      const field = own(parts, key);
      if (field) move(`${alias}.${key}`, field, part);
      else errors.push(fail(`${alias}.${key}`, 'unknown_field', 'is not a field of this alias'));
    }
  }
  return input;
}

const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_ID;

function setAsideReadOnly(
  schema: ResourceSchema,
  mode: WriteMode,
  input: Record<string, unknown>,
  parsed: ParsedWrite,
  errors: FieldError[],
  pathId?: number,
): void {
  if (mode !== 'create' && 'id' in input) {
    if (input.id !== pathId)
      errors.push(fail('id', 'id_mismatch', `must be the id of the path (${pathId}) or left out`));
    delete input.id;
  }
  if (mode === 'create' && 'id' in input && !isId(input.id)) {
    errors.push(fail('id', 'invalid_type', `must be an integer from 1 to ${MAX_ID}`));
    delete input.id;
  }
  if ('is_deleted' in input && schema.resource === 'servers') {
    const value = input.is_deleted === 0 ? false : input.is_deleted === 1 ? true : input.is_deleted;
    delete input.is_deleted;
    if (mode === 'patch' && value === false) parsed.restore = true;
    else if (value === true && mode !== 'replace')
      errors.push(fail('is_deleted', 'read_only', 'only DELETE deletes a server'));
    else if (typeof value !== 'boolean') errors.push(fail('is_deleted', 'invalid_type', 'must be boolean'));
  }
  for (const name of [
    'version',
    'created_at',
    'updated_at',
    ...Object.keys(schema.outputExtras),
    ...(schema.ignored ?? []),
  ]) {
    delete input[name];
  }
}

/**
 * An array longer than its schema allows is one problem, reported before the items are looked at:
 * validating 100,000 items one by one would be work a client could make the service do for nothing.
 */
function setAsideLongArrays(schema: ResourceSchema, input: Record<string, unknown>, errors: FieldError[]): void {
  for (const [name, field] of Object.entries(schema.fields)) {
    const limit = field.schema.maxItems as number | undefined;
    const value = input[name];
    if (limit === undefined || !Array.isArray(value) || value.length <= limit) continue;
    errors.push(fail(name, 'too_many', `must have at most ${limit} items`));
    delete input[name];
  }
}

/** Strings trimmed (secrets excepted), and 0 / 1 accepted for booleans. */
function normalise(schema: ResourceSchema, input: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(input)) {
    const field = own(schema.fields, name);
    if (!field) continue;
    if (typeof value === 'string' && !field.keepWhitespace) input[name] = value.trim();
    if (field.schema.type === 'boolean' && (value === 0 || value === 1)) input[name] = value === 1;
  }
}
