import type { Resource } from '../domain/shared/declaration.js';
import type { FieldSpec, JsonSchema } from '../domain/shared/fields.js';
import { MAX_ID } from '../domain/shared/types.js';

export const WRITE_MODES = ['create', 'replace', 'patch'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

/** The common read-only fields of every entry. */
export const META_FIELDS = ['version', 'created_at', 'updated_at'] as const;

/** A field's JSON Schema with its description (and its default, where the mode applies one). */
function fieldSchema(spec: FieldSpec, mode: WriteMode): JsonSchema {
  const constant = spec.fallback && 'value' in spec.fallback ? { default: spec.fallback.value } : {};
  return { ...spec.schema, description: spec.description, ...(mode === 'patch' ? {} : constant) };
}

const isRequired = (spec: FieldSpec, mode: WriteMode) =>
  mode !== 'patch' && (spec.required === 'always' || (mode === 'create' && spec.required === 'on-create'));

/**
 * The schema a write body is validated with, once aliases are resolved and read-only fields set
 * aside: every field, defaults on POST and PUT, the required ones, nothing else.
 */
export function writeSchema(resource: Resource, mode: WriteMode): JsonSchema {
  const fields = Object.entries(resource.declaration.fields);
  const properties: Record<string, JsonSchema> = Object.fromEntries(
    fields.map(([name, spec]) => [name, fieldSchema(spec, mode)]),
  );
  const required = fields.filter(([, spec]) => isRequired(spec, mode)).map(([name]) => name);
  if (mode === 'create') {
    properties.id = {
      type: 'integer',
      minimum: 1,
      maximum: MAX_ID,
      description: 'take this id; 409 if it was ever used',
    };
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** The names accepted on input and set aside: read-only fields of a GET body, and the crypted flag. */
export function ignoredInputs(resource: Resource): string[] {
  const { cryptedInput } = resource.declaration;
  return [...META_FIELDS, ...Object.keys(resource.outputs), ...(cryptedInput ? [cryptedInput] : [])];
}

/** The entry as GET returns it: shown fields (never secrets), read-only fields, version and timestamps. */
export function entrySchema(resource: Resource): JsonSchema {
  const { fields, title } = resource.declaration;
  const { outputs } = resource;
  const properties: Record<string, JsonSchema> = { id: { type: 'integer', minimum: 1, maximum: MAX_ID } };
  for (const name of resource.shownFields)
    properties[name] = { ...fields[name].schema, description: fields[name].description };
  for (const [name, output] of Object.entries(outputs))
    properties[name] = { ...output.schema, description: output.description };
  properties.version = { type: 'integer', minimum: 1, description: '1 after creation, +1 per recorded change' };
  properties.created_at = { type: 'string', format: 'date-time' };
  properties.updated_at = { type: 'string', format: 'date-time' };
  return { type: 'object', title, properties, required: Object.keys(properties), additionalProperties: false };
}
