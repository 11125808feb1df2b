import type { Input } from '../domain/commands.js';
import type { ResourceName } from '../domain/resources.js';
import { unreadable } from '../domain/shared/collation.js';
import type { Resource } from '../domain/shared/declaration.js';
import { type FieldError, MAX_LISTED_ERRORS } from '../domain/shared/errors.js';
import { ignoredInputs, type WriteMode } from './write.js';

/**
 * The steps a write body goes through before and after its schema, in the order WriteValidator.parse
 * runs them: names it does not take set aside, aliases resolved, read-only fields set aside,
 * ciphertexts opened, strings trimmed and booleans read, over-long lists refused, defaults completed.
 */

/** Opens a PmaControl ciphertext (`is_password_crypted`); throws when it does not open. */
export type CiphertextOpener = (ciphertext: string) => string;

export type Body = Record<string, unknown>;

export interface ParsedWrite<R extends ResourceName = ResourceName> {
  /** POST: the id asked for, if any. */
  id?: number;
  input: Partial<Input<R>>;
  /** PATCH `{"is_deleted": false}` on a soft-deleted entry. */
  restore?: boolean;
  /** The resource's crypted flag was set: its secrets are PmaControl ciphertexts. */
  crypted?: boolean;
}

/** The longest field name a problem repeats (a client may send a key of any length). */
const NAME_SHOWN = 64;
const shown = (name: string) => (name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name);

export const fail = (field: string, code: string, message: string): FieldError => ({
  field: shown(field),
  code,
  message,
});

/**
 * The names a body may hold, whatever the mode: fields, aliases, read-only fields set aside, `id`,
 * `is_deleted`. Any other is refused before the body is validated: a body of 50,000 unknown keys
 * cost a second of ajv's time, every one of them reported.
 */
const accepted = new WeakMap<Resource, Set<string>>();
function acceptedNames(resource: Resource): Set<string> {
  let names = accepted.get(resource);
  if (!names) {
    const { fields, objectAliases } = resource.declaration;
    names = new Set([
      ...Object.keys(fields),
      ...Object.values(fields).flatMap((spec) => spec.aliases),
      ...Object.keys(objectAliases ?? {}),
      ...ignoredInputs(resource),
      'id',
      'is_deleted',
    ]);
    accepted.set(resource, names);
  }
  return names;
}

/**
 * Unknown names are taken out of the body before it is validated: the first MAX_LISTED_ERRORS are
 * problems, the others only counted (the answer's `error_count` gives them all).
 */
export function setAsideUnknown(resource: Resource, input: Body): { unknown: FieldError[]; unlisted: number } {
  const names = acceptedNames(resource);
  const unknown: FieldError[] = [];
  let unlisted = 0;
  for (const name of Object.keys(input)) {
    if (names.has(name)) continue;
    delete input[name];
    if (unknown.length < MAX_LISTED_ERRORS)
      unknown.push(fail(name, 'unknown_field', 'is not a field of this resource'));
    else unlisted++;
  }
  return { unknown, unlisted };
}

/** Secrets sent as PmaControl ciphertexts are replaced by their plain text, then checked as usual. */
export function openCiphertexts(resource: Resource, input: Body, errors: FieldError[], open?: CiphertextOpener): void {
  for (const field of resource.secretFields) {
    const value = input[field];
    if (typeof value !== 'string') continue;
    if (!open) {
      errors.push(
        fail(field, 'crypt_key_missing', 'is sent as PmaControl ciphertext, but no PmaControl key is configured'),
      );
      continue;
    }
    try {
      input[field] = open(value);
    } catch {
      errors.push(fail(field, 'undecryptable', 'is sent as PmaControl ciphertext, but does not decrypt with its key'));
    }
  }
}

/**
 * The body copied, to be worked on. Object.assign rather than a spread: ajv adds the defaults to the
 * copy, and V8 gives each field added to a spread copy a new hidden class (bench/http.ts create).
 * A body with its own "__proto__" key is spread, so that the key stays a field (refused as unknown)
 * and never becomes the copy's prototype.
 */
export const copyOf = (body: Body): Body => (Object.hasOwn(body, '__proto__') ? { ...body } : Object.assign({}, body));

/** Aliases moved to their fields, in `input` (a copy the parse owns). */
export function resolveAliases(resource: Resource, input: Body, errors: FieldError[]): Body {
  const move = (alias: string, field: string, value: unknown) => {
    if (Object.hasOwn(input, field))
      errors.push(fail(alias, 'duplicate_field', `is an alias of ${field}, which is also given`));
    else input[field] = value;
  };
  for (const [alias, field] of planOf(resource).aliases) {
    if (!Object.hasOwn(input, alias)) continue;
    const value = input[alias];
    delete input[alias];
    move(alias, field, value);
  }
  for (const [alias, { parts }] of Object.entries(resource.declaration.objectAliases ?? {})) {
    if (!Object.hasOwn(input, alias)) continue;
    const value = input[alias];
    delete input[alias];
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push(fail(alias, 'invalid_type', `must be an object with ${Object.keys(parts).join(', ')}`));
      continue;
    }
    for (const [key, part] of Object.entries(value as Body)) {
      const field = Object.hasOwn(parts, key) ? parts[key] : undefined;
      if (field) move(`${alias}.${key}`, field, part);
      else errors.push(fail(`${alias}.${key}`, 'unknown_field', 'is not a field of this alias'));
    }
  }
  return input;
}

const asBoolean = (value: unknown) => (value === 0 ? false : value === 1 ? true : value);

/** Read-only fields of a GET body are ignored (so a GET body can be sent back); `id` must be the path's. */
export function setAsideReadOnly(
  resource: Resource,
  mode: WriteMode,
  input: Body,
  parsed: ParsedWrite,
  errors: FieldError[],
  pathId?: number,
): void {
  if (mode !== 'create' && Object.hasOwn(input, 'id')) {
    if (input.id !== pathId)
      errors.push(fail('id', 'id_mismatch', `must be the id of the path (${pathId}) or left out`));
    delete input.id;
  }
  if (resource.declaration.deletion === 'soft' && Object.hasOwn(input, 'is_deleted')) {
    const value = asBoolean(input.is_deleted);
    delete input.is_deleted;
    if (typeof value !== 'boolean') errors.push(fail('is_deleted', 'invalid_type', 'must be boolean'));
    else if (mode === 'patch' && !value) parsed.restore = true;
    else if (value && mode !== 'replace') errors.push(fail('is_deleted', 'read_only', 'only DELETE deletes'));
  }
  const flag = resource.declaration.cryptedInput;
  if (flag && Object.hasOwn(input, flag)) {
    const value = asBoolean(input[flag]);
    if (typeof value !== 'boolean') errors.push(fail(flag, 'invalid_type', 'must be boolean (or 0 or 1)'));
    else parsed.crypted = value;
  }
  for (const name of ignoredInputs(resource)) delete input[name];
}

/** Strings trimmed (except where declared otherwise), and 0 / 1 accepted for booleans. */
export function normalise(resource: Resource, input: Body, errors: FieldError[]): void {
  const { fields } = resource.declaration;
  for (const [name, value] of Object.entries(input)) {
    const spec = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!spec) continue;
    if (typeof value === 'string' && spec.trim) input[name] = readable(resource, name, value.trim(), errors);
    if (spec.schema.type === 'boolean') input[name] = asBoolean(value);
  }
}

/** Whether a text holds a character past ASCII. */
function beyondAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return true;
  return false;
}

/**
 * A text people read, in NFC (canonically equivalent forms are one text), refused on its field when
 * it holds what people cannot read as written (see `unreadable`). ASCII text is neither.
 */
function readable(resource: Resource, field: string, text: string, errors: FieldError[]): string {
  if (!beyondAscii(text)) return text;
  const problem = unreadable(text, uniqueNames(resource).has(field));
  if (problem) errors.push(fail(field, problem.code, problem.message));
  return text.normalize('NFC');
}

const names = new WeakMap<Resource, Set<string>>();
/** The fields of a resource whose values are names that must be unique, compared as MariaDB compares them. */
function uniqueNames(resource: Resource): Set<string> {
  let found = names.get(resource);
  if (!found) {
    found = new Set((resource.declaration.unique ?? []).flatMap((key) => key.caseInsensitive ?? []));
    names.set(resource, found);
  }
  return found;
}

/**
 * An array longer than its schema allows is one problem, reported before the items are looked at:
 * validating 100,000 items one by one would be work a client could make the service do for nothing.
 */
export function setAsideLongArrays(resource: Resource, input: Body, errors: FieldError[]): void {
  for (const [name, limit] of planOf(resource).limits) {
    const value = input[name];
    if (!Array.isArray(value) || value.length <= limit) continue;
    errors.push(fail(name, 'too_many', `must have at most ${limit} items`));
    delete input[name];
  }
}

/** Defaults made from other fields (POST and PUT), and id lists without duplicates in ascending order. */
export function complete(resource: Resource, mode: WriteMode, input: Body): void {
  for (const { name, from, idList } of planOf(resource).completed) {
    if (from && mode !== 'patch' && input[name] === undefined) input[name] = from(input);
    if (idList && Array.isArray(input[name])) input[name] = [...new Set(input[name] as number[])].sort((a, b) => a - b);
  }
}

/**
 * The few fields of a resource that each step of `parse` looks at, listed once per resource, so
 * that no step goes through every declared field of every body (bench/http.ts patch).
 */
interface InputPlan {
  /** [alias, field] for every alias of a field. */
  aliases: [string, string][];
  /** [field, maxItems] for every field with a maximum of items. */
  limits: [string, number][];
  /** In declaration order, the fields whose default is made from the others, and the lists of ids. */
  completed: { name: string; from?: (input: Body) => unknown; idList: boolean }[];
}

const plans = new WeakMap<Resource, InputPlan>();

function planOf(resource: Resource): InputPlan {
  let plan = plans.get(resource);
  if (plan) return plan;
  plan = { aliases: [], limits: [], completed: [] };
  for (const [name, spec] of Object.entries(resource.declaration.fields)) {
    for (const alias of spec.aliases) plan.aliases.push([alias, name]);
    const limit = spec.schema.maxItems as number | undefined;
    if (limit !== undefined) plan.limits.push([name, limit]);
    const from = spec.fallback && 'from' in spec.fallback ? spec.fallback.from : undefined;
    if (from || spec.reference) plan.completed.push({ name, from, idList: Boolean(spec.reference) });
  }
  plans.set(resource, plan);
  return plan;
}
