import { isIP } from 'node:net';
import { MAX_ID } from './types.js';

/** A JSON Schema object, as ajv and OpenAPI 3.1 both read it. */
export type JsonSchema = Record<string, unknown>;

/** A sealed secret: what `SecretBox.seal` returns. Only sealed values reach events and read models. */
export type Sealed = string & { readonly __sealed: unique symbol };

/** What happens to an entry that references an entry being deleted (hard). */
export type WhenTargetDeleted =
  /** The delete is refused (409 `in_use`) while any entry references it. */
  | 'refuse'
  /** The id is removed from the referencing list (servers' `tags`). */
  | 'remove'
  /** Refused while a live (not soft-deleted) entry references it; soft-deleted ones keep the id or move. */
  | { live: 'refuse'; softDeleted: 'keep' | { moveTo: number } };

export interface Reference {
  /** The resource (URL name) the id points into. */
  target: string;
  /** An entry that exists but cannot be pointed at (a soft-deleted server), with why. */
  unusable?: { when: (target: Record<string, unknown>) => boolean; why: string };
  whenTargetDeleted: WhenTargetDeleted;
}

/** How PmaControl keeps a field in its table, where that differs from a column of the field's name and type. */
export interface PmaControlColumn {
  /** 0 stands for none (PmaControl's NOT NULL ids): read as null. */
  zeroIsNull?: boolean;
  /** An empty text stands for none: left out, so that the field's default applies. */
  emptyIsAbsent?: boolean;
  /**
   * A value PmaControl may keep encrypted or in clear (a secret without a flag column, a public key):
   * a value that matches is taken as it is, any other opened with PmaControl's key.
   */
  plainWhen?: RegExp;
}

/** Everything the service knows about one field; validation, OpenAPI, presenter and fold read it. */
export interface FieldSpec<T = unknown> {
  /** The JSON Schema of a stored value (after trimming and boolean normalisation). */
  readonly schema: JsonSchema;
  readonly description: string;
  /** What people call it, where its name does not say (`passwd`: password). */
  readonly label?: string;
  /** `always`: required on POST and PUT; `on-create`: on POST only (PUT keeps the stored value). */
  readonly required: 'always' | 'on-create' | false;
  /** The value stored when POST or PUT leaves the field out: a constant or made from the other fields. */
  readonly fallback?: { value: T } | { from: (fields: Record<string, unknown>) => T; description: string };
  readonly nullable: boolean;
  /** Write-only: sealed before it reaches an event, never shown, `[redacted]` in histories. */
  readonly secret: boolean;
  /** Computed from other fields (an SSH key's type); a value sent by a client must match it. */
  readonly derived: boolean;
  /** Strings are trimmed before they are checked, except these (passwords are kept as sent). */
  readonly trim: boolean;
  /** Other input names (PmaControl's interface summary), never returned. */
  readonly aliases: readonly string[];
  /**
   * Every scalar field is a list filter (`?field=value`, repeated for OR). A list of ids is one when
   * it has this name: `?<filterAs>=id` keeps the entries holding that id, repeated for AND
   * (servers: `?tag=3&tag=4`).
   */
  readonly filterAs?: string;
  /** Searched by `?q=` (case-insensitive substring). */
  readonly search: boolean;
  /** Keeps the first value other than null it is given: a later change of it changes nothing. */
  readonly setOnce: boolean;
  /** How PmaControl's column of the same name holds it, where it needs saying. */
  readonly pmacontrol?: PmaControlColumn;
  readonly reference?: Reference;
  /**
   * A secret the service makes when a creation leaves it out, shown once in the 201 answer:
   * `prefix` then base64 of `bytes` random bytes (an event rule's signing key).
   */
  readonly made?: { prefix: string; bytes: number };
  readonly example?: T;
  /** Phantom member carrying the value's type; never set. */
  readonly _type?: T;
}

/** Options every builder takes. */
export interface Options<T> {
  required?: boolean | 'on-create';
  default?: T;
  /** A default computed from the other fields, e.g. `display_name` from `name`. */
  defaultFrom?: { from: (fields: Record<string, unknown>) => T; description: string };
  description: string;
  label?: string;
  aliases?: string[];
  filterAs?: string;
  search?: boolean;
  setOnce?: boolean;
  pmacontrol?: PmaControlColumn;
  example?: T;
}

function field<T>(schema: JsonSchema, options: Options<T>, extra: Partial<FieldSpec<T>> = {}): FieldSpec<T> {
  const fallback = options.default !== undefined ? { value: options.default } : (options.defaultFrom ?? undefined);
  return {
    schema,
    description: options.description,
    ...(options.label ? { label: options.label } : {}),
    required: options.required === true ? 'always' : options.required === 'on-create' ? 'on-create' : false,
    ...(fallback ? { fallback } : {}),
    nullable: false,
    secret: false,
    derived: false,
    trim: true,
    aliases: options.aliases ?? [],
    ...(options.filterAs ? { filterAs: options.filterAs } : {}),
    search: options.search ?? false,
    setOnce: options.setOnce ?? false,
    ...(options.pmacontrol ? { pmacontrol: options.pmacontrol } : {}),
    ...(options.example !== undefined ? { example: options.example } : {}),
    ...extra,
  };
}

export const text = (min: number, max: number, options: Options<string> & { pattern?: string }): FieldSpec<string> =>
  field(
    { type: 'string', minLength: min, maxLength: max, ...(options.pattern ? { pattern: options.pattern } : {}) },
    options,
  );

/** A text, or null for none. */
export const nullableText = (min: number, max: number, options: Options<string | null>): FieldSpec<string | null> =>
  field({ type: ['string', 'null'], minLength: min, maxLength: max }, options, { nullable: true });

export const oneOf = <const V extends string>(values: readonly V[], options: Options<V>): FieldSpec<V> =>
  field({ type: 'string', enum: [...values] }, options);

export const integer = (min: number, max: number, options: Options<number>): FieldSpec<number> =>
  field({ type: 'integer', minimum: min, maximum: max }, options);

export const port = (options: Options<number>): FieldSpec<number> => integer(1, 65535, options);

/** On input also 0 and 1, as PmaControl sends them. */
export const boolean = (options: Options<boolean>): FieldSpec<boolean> => field({ type: 'boolean' }, options);

export const color = (options: Options<string>): FieldSpec<string> =>
  field({ type: 'string', maxLength: 7, pattern: '^#[0-9A-Fa-f]{6}$' }, options);

/** An IPv4 or IPv6 address, or a host name (RFC 1123). */
export const host = (max: number, options: Options<string>): FieldSpec<string> =>
  field({ type: 'string', minLength: 1, maxLength: max, format: 'host' }, options);

export const nullableInteger = (min: number, options: Options<number | null>): FieldSpec<number | null> =>
  field({ type: ['integer', 'null'], minimum: min, maximum: MAX_ID }, options, { nullable: true });

/** The id of an entry of `target`. */
export const ref = (target: string, options: Options<number> & Omit<Reference, 'target'>): FieldSpec<number> => {
  const { whenTargetDeleted, unusable, ...rest } = options;
  return field({ type: 'integer', minimum: 1, maximum: MAX_ID }, rest, {
    reference: { target, whenTargetDeleted, ...(unusable ? { unusable } : {}) },
  });
};

/** A set of ids of entries of `target`, stored without duplicates in ascending order. */
export const refs = (
  target: string,
  maxItems: number,
  options: Options<number[]> & Omit<Reference, 'target'>,
): FieldSpec<number[]> => {
  const { whenTargetDeleted, unusable, ...rest } = options;
  const schema = { type: 'array', maxItems, items: { type: 'integer', minimum: 1, maximum: MAX_ID } };
  return field(schema, rest, { reference: { target, whenTargetDeleted, ...(unusable ? { unusable } : {}) } });
};

/**
 * A write-only secret: sealed before any event, never returned; kept byte for byte as it was sent
 * (never trimmed: a private key's last newline, a password's spaces are part of it).
 */
export const secret = (min: number, max: number, options: Options<string>): FieldSpec<Sealed> =>
  field({ type: 'string', minLength: min, maxLength: max }, options as Options<Sealed>, { secret: true, trim: false });

/** A list of JSON values, each valid against `items` (an event rule's conditions), compared by its JSON. */
export const list = <T>(items: JsonSchema, maxItems: number, options: Options<T[]>): FieldSpec<T[]> =>
  field({ type: 'array', maxItems, items }, options);

/** Computed from other fields; accepted on input only when it matches. */
export const derived = <T>(spec: FieldSpec<T>): FieldSpec<T> => ({ ...spec, derived: true });

const HOSTNAME =
  /^(?=.{1,253}\.?$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;
/** A name whose last label is all digits is no host name (RFC 3696, 2): `999.1.1.1` is a bad address. */
const NUMERIC_TOP_LABEL = /(^|\.)[0-9]+\.?$/;

/** The `host` format: an IP address or a host name (RFC 1123). */
export const isHost = (value: string): boolean =>
  isIP(value) !== 0 || (!NUMERIC_TOP_LABEL.test(value) && HOSTNAME.test(value));
