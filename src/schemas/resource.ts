import type { Resource } from '../domain/shared/types.js';
import { integer, type JsonSchema, timestamp } from './fields.js';

export interface FieldSpec {
  schema: JsonSchema;
  /** Required on POST and PUT. */
  required?: boolean;
  /** Required on POST only; on PUT, leaving it out keeps the stored value (write-only secrets). */
  requiredOnCreate?: boolean;
  /** The value a POST or PUT without the field stores. */
  default?: unknown;
  /** Accepts `null` (PATCH included). */
  nullable?: boolean;
  /** Write-only: never returned, sealed before it reaches an event. */
  secret?: boolean;
  /** Sent values are compared with the derived ones (ssh-keys `type`, `bit`, `fingerprint`), never stored as sent. */
  derived?: boolean;
  /** Do not trim (secrets are kept exactly as sent). */
  keepWhitespace?: boolean;
}

export interface ResourceSchema {
  resource: Resource;
  /** Singular name for titles and schema names, e.g. `Tag`. */
  title: string;
  fields: Record<string, FieldSpec>;
  /** Read-only fields of a GET body beyond the common ones, returned and ignored on input. */
  outputExtras: Record<string, JsonSchema>;
  /** Input names from PmaControl's interface summary: alias → field. */
  aliases?: Record<string, string>;
  /** An alias whose value is an object spread over several fields: alias → (key → field). */
  objectAliases?: Record<string, Record<string, string>>;
  /** Accepted on input and ignored (PmaControl sends them). */
  ignored?: string[];
  /** Query parameters that narrow the list: name → the entry field compared. */
  filters?: Record<string, JsonSchema>;
  example: Record<string, unknown>;
}

export const COMMON_READ_ONLY = ['id', 'version', 'created_at', 'updated_at'];

export const commonOutput = (): Record<string, JsonSchema> => ({
  id: integer(1),
  version: integer(1),
  created_at: timestamp(),
  updated_at: timestamp(),
});

/** The stored fields a client sees, in schema order: every field but the write-only secrets. */
export const shownFields = (resource: ResourceSchema): string[] =>
  Object.entries(resource.fields)
    .filter(([, field]) => !field.secret)
    .map(([name]) => name);
