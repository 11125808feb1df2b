import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Input } from '../domain/commands.js';
import { RESOURCE_NAMES, type ResourceName, resourceOf } from '../domain/resources.js';
import { type FieldError, MAX_LISTED_ERRORS, ValidationFailed } from '../domain/shared/errors.js';
import { isHost } from '../domain/shared/fields.js';
import {
  type Body,
  type CiphertextOpener,
  complete,
  copyOf,
  fail,
  normalise,
  openCiphertexts,
  type ParsedWrite,
  resolveAliases,
  setAsideLongArrays,
  setAsideReadOnly,
  setAsideUnknown,
} from './body-steps.js';
import { WRITE_MODES, type WriteMode, writeSchema } from './write.js';

export type { CiphertextOpener, ParsedWrite } from './body-steps.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Ajv for the service's own schemas, not checked against JSON Schema's meta-schema when compiled
 * (`validateSchema: false`), which would compile the meta-schema inside a request (bench/http.ts,
 * first requests after a start); the tests check them against it instead.
 */
export function createAjv(options: { useDefaults?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    useDefaults: options.useDefaults ?? false,
    validateSchema: false,
  });
  addFormats(ajv);
  ajv.addFormat('host', { type: 'string', validate: isHost });
  return ajv;
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

/** ajv's errors as the problems every write lists: one per field, with the codes of CODES. */
export function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const byField = new Map<string, FieldError>();
  for (const error of errors) {
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    const path = error.instancePath.split('/').slice(1);
    const field =
      params.missingProperty ??
      params.additionalProperty ??
      path.map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).join('.');
    const message =
      error.keyword === 'additionalProperties'
        ? 'is not a field of this resource'
        : error.keyword === 'required'
          ? 'is required'
          : (error.message ?? 'is invalid');
    if (!byField.has(field)) byField.set(field, fail(field, CODES[error.keyword] ?? 'invalid', message));
    if (byField.size >= MAX_LISTED_ERRORS) break;
  }
  return [...byField.values()];
}

/** Validates write bodies against the resources' declarations, compiled once. */
export class WriteValidator {
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly ajv = createAjv({ useDefaults: true });

  /** `openPmaControl`: set when the service was given PmaControl's key (PMACONTROL_CRYPT_KEY_FILE). */
  constructor(private readonly openPmaControl?: CiphertextOpener) {}

  /** How many validators are compiled so far. */
  get compiledCount(): number {
    return this.compiled.size;
  }

  /**
   * Compiles every validator not compiled yet, one per turn of the event loop, and resolves when all
   * are; `stop()` ends it early. Called once the service listens, so that neither the start nor a
   * first write waits for the compiles (bench/http.ts: start-up, and the first requests after it).
   */
  warm(): { done: Promise<void>; stop: () => void } {
    const pending = RESOURCE_NAMES.flatMap((name) => WRITE_MODES.map((mode) => [name, mode] as const));
    let timer: NodeJS.Timeout | undefined;
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const next = () => {
      const step = pending.shift();
      if (!step) return finish();
      try {
        this.validator(...step);
      } catch {
        // Not here, in a timer, where it would end the process: the write that needs it reports it.
      }
      timer = setTimeout(next, 0).unref();
    };
    timer = setTimeout(next, 0).unref();
    const stop = () => {
      clearTimeout(timer);
      finish();
    };
    return { done, stop };
  }

  /** The validator of one resource and mode, compiled on first use (or by `warm`). */
  private validator(name: ResourceName, mode: WriteMode): ValidateFunction {
    const key = `${name}/${mode}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(writeSchema(resourceOf(name), mode));
      this.compiled.set(key, validate);
    }
    return validate;
  }

  parse<R extends ResourceName>(name: R, mode: WriteMode, body: Body, pathId?: number): ParsedWrite<R> {
    const resource = resourceOf(name);
    const errors: FieldError[] = [];
    const input = copyOf(body);
    const { unknown, unlisted } = setAsideUnknown(resource, input);
    resolveAliases(resource, input, errors);
    const parsed: ParsedWrite<R> = { input: input as Partial<Input<R>> };
    setAsideReadOnly(resource, mode, input, parsed, errors, pathId);
    if (parsed.crypted) openCiphertexts(resource, input, errors, this.openPmaControl);
    normalise(resource, input, errors);
    setAsideLongArrays(resource, input, errors);
    const validate = this.validator(name, mode);
    if (!validate(input)) for (const error of toFieldErrors(validate.errors ?? [])) errors.push(error);
    errors.push(...unknown);
    if (errors.length > 0) throw new ValidationFailed(errors, { unlisted });
    if (mode === 'create' && input.id !== undefined) {
      parsed.id = input.id as number;
      delete input.id;
    }
    complete(resource, mode, input);
    return parsed;
  }
}
