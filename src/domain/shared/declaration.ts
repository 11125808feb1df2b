import type { TableSpec } from '../../engine/table.js';
import type { KeySpec } from '../../engine/unique-index.js';
import { collationKey } from './collation.js';
import type { FieldError } from './errors.js';
import type { FieldSpec, JsonSchema, Reference, Sealed } from './fields.js';

/**
 * A value that must not appear twice in a resource, e.g. a server's `name`, or `ip` with `port`
 * (`among`: only these entries take part, e.g. live tokens).
 */
export interface UniqueKey extends KeySpec {
  /** How a 409 names the value, e.g. `server name "db-1"`. */
  describe: (entry: Record<string, unknown>) => string;
}

/** A read-only field of a GET body, derived from the stored entry. */
export interface OutputField {
  schema: JsonSchema;
  description: string;
  from: (entry: Record<string, unknown>) => unknown;
  example: unknown;
}

/** An input name whose value is an object spread over several fields (`géolocalisation`). */
export interface ObjectAlias {
  description: string;
  /** Key of the object → field. */
  parts: Record<string, string>;
  /** The form the API's own examples use (an event rule's `target`); otherwise a compatibility form, deprecated. */
  preferred?: true;
}

/** What a resource-specific preparation step may use: the stored entry and a way to open its secrets. */
export interface PrepareContext {
  mode: 'create' | 'replace' | 'patch';
  current?: Record<string, unknown>;
  /** The plain text of a stored secret, or undefined when it cannot be opened. */
  open: (sealed: Sealed) => string | undefined;
}

/**
 * Where PmaControl keeps a resource (its install schema, sql/full/pmacontrol.sql): its table, whose
 * columns are named as the fields (see FieldSpec.pmacontrol for the exceptions).
 */
export interface PmaControlTable {
  table: string;
  /** The row's column that says its secrets are stored encrypted under PmaControl's CRYPT_KEY (set to 1). */
  cryptedColumn?: string;
  /** A list of ids kept in a link table, by field. */
  links?: Record<string, PmaControlLink>;
  /** The column that holds when the row was made, written from the entry's `created_at`. */
  createdAt?: string;
}

/** A link table: its name, its column naming the row and the one naming the id. */
export interface PmaControlLink {
  table: string;
  owner: string;
  target: string;
}

/**
 * The declaration of one resource: the one place that says what its fields are, which are secret,
 * unique, references or filters, how it is deleted, and what it shows. Validation, the OpenAPI
 * document, the presenter, secret sealing, list filters, the deciders and the fold derive from it.
 */
export interface ResourceDeclaration<F extends Record<string, FieldSpec> = Record<string, FieldSpec>> {
  /** The URL segment: `ssh-keys`. */
  name: string;
  /** Singular, for schema names and event types: `SshKey` (events `SshKeyCreated` …). */
  title: string;
  /** Singular, for people: `SSH key`. */
  label: string;
  /** Plural, for operation ids: `SshKeys`. */
  plural: string;
  /** Stream category in EventStoreDB style: `sshKey` (entry streams `sshKey-12`). */
  category: string;
  description: string;
  fields: F;
  /**
   * `admin`: only admins read or write it, at `/fr/api/<name>` (event rules); it is not part of the
   * configuration (export, import, the differences between two moments, the console's inventory),
   * and its changes are shown to admins only. Absent: a configuration resource, at
   * `/fr/api/config/<name>`.
   */
  scope?: 'admin';
  unique?: UniqueKey[];
  /** `soft`: the entry stays with `is_deleted: true` and can be restored. */
  deletion: 'hard' | 'soft';
  /** A rule of the resource's own on an entry as a write would make it (a reserved name), or undefined. */
  refuse?: (entry: Record<string, unknown>) => FieldError | undefined;
  /** Event types of its own for some changes (tokens: `TokenIssued`); else `<title>Created` and so on. */
  eventNames?: Partial<Resource['events']>;
  /** Event types of its own that fold as updates of one entry (an approval's votes, its execution). */
  updateEvents?: readonly string[];
  /** Why an entry can never be deleted (409 `delete_guarded`), or undefined. */
  guardDelete?: (entry: Record<string, unknown>) => string | undefined;
  outputs?: Record<string, OutputField>;
  objectAliases?: Record<string, ObjectAlias>;
  /**
   * The input field that says a write's secrets are sent as PmaControl ciphertexts
   * (`is_password_crypted`): accepted on input, never stored or returned. (Where PmaControl's own
   * table keeps such a flag is `pmacontrol.cryptedColumn`.)
   */
  cryptedInput?: string;
  /**
   * Fills derived fields and checks what only this resource can check (an SSH key pair matches),
   * before secrets are sealed. Plain input in, plain input out.
   */
  prepare?: (fields: Record<string, unknown>, context: PrepareContext) => Record<string, unknown>;
  /**
   * Checks of an input too costly for the event loop (a signature made with a private key): they
   * run in the thread pool before the write is decided, and a problem refuses it (422).
   */
  prove?: (fields: Record<string, unknown>) => Promise<FieldError[]>;
  /** Where PmaControl keeps it; absent: PmaControl has no such table. */
  pmacontrol?: PmaControlTable;
  /** A request body for the OpenAPI examples; it must pass validation on POST. */
  example: Record<string, unknown>;
}

/** The stored value types of a resource's fields (secrets sealed). */
export type FieldsOf<R extends Resource> = {
  -readonly [K in keyof R['declaration']['fields']]: R['declaration']['fields'][K] extends FieldSpec<infer T>
    ? T
    : never;
};

/** The value types of a resource's fields as a client sends them (secrets in plain text). */
export type InputOf<R extends Resource> = {
  [K in keyof FieldsOf<R>]: FieldsOf<R>[K] extends Sealed ? string : FieldsOf<R>[K];
};

/** A reference from one resource's field to another resource. */
export interface Link {
  from: string;
  field: string;
  many: boolean;
  reference: Reference;
}

/** A declaration with what the shared machinery needs worked out once. */
export interface Resource<D extends ResourceDeclaration = ResourceDeclaration> {
  readonly declaration: D;
  readonly name: string;
  /** Every field, in declaration order (the order events and answers list them). */
  readonly fieldNames: readonly string[];
  /** The fields a client sees: every field but the secrets. */
  readonly shownFields: readonly string[];
  readonly secretFields: readonly string[];
  readonly references: readonly Link[];
  /** What the state's table of this resource indexes (unique keys, reference fields). */
  readonly table: TableSpec<UniqueKey>;
  /** The read-only fields of a GET body: `has_<secret>` for each secret, then the declared outputs. */
  readonly outputs: Readonly<Record<string, OutputField>>;
  readonly events: {
    created: string;
    updated: string;
    deleted: string;
    restored: string;
    reverted: string;
  };
}

/** What stands in for a secret in a GET body: whether one is set. */
const hasSecret = (field: string): OutputField => ({
  schema: { type: 'boolean' },
  description: `a ${field} is set (the value itself is never returned)`,
  from: (entry) => typeof entry[field] === 'string',
  example: true,
});

/** Works out, once, what the shared machinery asks of a declaration. */
export function defineResource<const D extends ResourceDeclaration>(declaration: D): Resource<D> {
  const entries = Object.entries(declaration.fields) as [string, FieldSpec][];
  const prefix = declaration.title;
  const secrets = entries.filter(([, spec]) => spec.secret).map(([name]) => name);
  const references = entries
    .filter(([, spec]) => spec.reference)
    .map(([name, spec]) => ({
      from: declaration.name,
      field: name,
      many: spec.schema.type === 'array',
      reference: spec.reference!,
    }));
  return {
    declaration,
    name: declaration.name,
    fieldNames: entries.map(([name]) => name),
    shownFields: entries.filter(([, spec]) => !spec.secret).map(([name]) => name),
    secretFields: secrets,
    outputs: { ...Object.fromEntries(secrets.map((name) => [`has_${name}`, hasSecret(name)])), ...declaration.outputs },
    references,
    table: {
      name: declaration.name,
      // Names compare as PmaControl's MariaDB compares them (case, accents; see collation.ts).
      unique: (declaration.unique ?? []).map((key) => ({ ...key, fold: collationKey })),
      referenceFields: references.map((link) => link.field),
    },
    events: {
      created: `${prefix}Created`,
      updated: `${prefix}Updated`,
      deleted: `${prefix}Deleted`,
      restored: `${prefix}Restored`,
      reverted: `${prefix}Reverted`,
      ...declaration.eventNames,
    },
  };
}
