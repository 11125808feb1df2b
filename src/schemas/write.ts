import { integer, type JsonSchema } from './fields.js';
import { type ResourceSchema, shownFields } from './resource.js';

export type WriteMode = 'create' | 'replace' | 'patch';

/**
 * The schema a write body is validated with, once aliases are resolved and read-only fields set
 * aside: every field, defaults on POST and PUT, required fields, nothing else.
 */
export function writeSchema(resource: ResourceSchema, mode: WriteMode): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(resource.fields)) {
    properties[name] =
      mode !== 'patch' && field.default !== undefined ? { ...field.schema, default: field.default } : field.schema;
    if (mode !== 'patch' && (field.required || (mode === 'create' && field.requiredOnCreate))) required.push(name);
  }
  if (mode === 'create') properties.id = { ...integer(1), description: 'take this id; 409 if it was ever used' };
  return { type: 'object', properties, required, additionalProperties: false };
}

/** The request body as documented: the validated fields plus what is accepted and set aside. */
export function documentedWriteSchema(resource: ResourceSchema, mode: WriteMode): JsonSchema {
  const base = writeSchema(resource, mode);
  const properties = { ...(base.properties as Record<string, JsonSchema>) };
  for (const [alias, field] of Object.entries(resource.aliases ?? {})) {
    properties[alias] = { ...(properties[field] ?? {}), description: `alias of ${field}`, deprecated: true };
  }
  for (const [alias, parts] of Object.entries(resource.objectAliases ?? {})) {
    properties[alias] = {
      type: 'object',
      description: `alias of ${Object.values(parts).join(' and ')}`,
      properties: Object.fromEntries(Object.keys(parts).map((k) => [k, { type: ['integer', 'null'], minimum: 1 }])),
      additionalProperties: false,
      deprecated: true,
    };
  }
  for (const name of [
    'version',
    'created_at',
    'updated_at',
    ...Object.keys(resource.outputExtras),
    ...(resource.ignored ?? []),
  ]) {
    properties[name] ??= { readOnly: true, description: 'accepted and ignored' };
  }
  if (mode !== 'create') properties.id = { ...integer(1), description: 'ignored when equal to the path id, else 422' };
  if (resource.resource === 'servers' && mode === 'patch') {
    properties.is_deleted = { type: 'boolean', description: 'false restores a soft-deleted server; true is refused' };
  }
  return { ...base, properties };
}

/** The entry as GET returns it: fields (never secrets), read-only fields, version and timestamps. */
export function entrySchema(resource: ResourceSchema, commonOutput: Record<string, JsonSchema>): JsonSchema {
  const properties: Record<string, JsonSchema> = { id: commonOutput.id };
  for (const name of shownFields(resource)) properties[name] = resource.fields[name].schema;
  Object.assign(properties, resource.outputExtras, commonOutput);
  return {
    type: 'object',
    title: resource.title,
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
    example: { id: 1, ...exampleOutput(resource) },
  };
}

function exampleOutput(resource: ResourceSchema): Record<string, unknown> {
  const example: Record<string, unknown> = {};
  for (const name of shownFields(resource)) {
    const field = resource.fields[name];
    const sources = [resource.example, field.default === undefined ? {} : { [name]: field.default }, EXAMPLE_DERIVED];
    const source = sources.find((s) => Object.hasOwn(s, name));
    example[name] = source ? source[name] : resource.example.name; // display_name defaults to name
  }
  for (const name of Object.keys(resource.outputExtras)) example[name] = EXAMPLE_DERIVED[name];
  return { ...example, version: 1, created_at: EXAMPLE_TIME, updated_at: EXAMPLE_TIME };
}

const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';
const EXAMPLE_DERIVED: Record<string, unknown> = {
  date: EXAMPLE_TIME,
  added_on: EXAMPLE_TIME,
  has_passwd: true,
  has_private_key: true,
  is_deleted: false,
  type: 'ED25519',
  bit: 256,
  fingerprint: 'SHA256:bv+lkv4roCcoyLUbpFK1/Sx/Iip53GuJMKzt1mTQ4Lo',
  comment: 'backup@pmacontrol',
};
