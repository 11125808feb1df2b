import type { Resource } from '../domain/shared/declaration.js';
import type { JsonSchema } from '../domain/shared/fields.js';
import { entrySchema, ignoredInputs, type WriteMode, writeSchema } from '../schemas/write.js';

const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';

/** A field's example value: the declaration's example body, the field's own example, or its default. */
function exampleValue(resource: Resource, name: string, body: Record<string, unknown>): unknown {
  const spec = resource.declaration.fields[name];
  if (Object.hasOwn(resource.declaration.example, name)) return resource.declaration.example[name];
  if (spec.example !== undefined) return spec.example;
  if (spec.fallback && 'value' in spec.fallback) return spec.fallback.value;
  if (spec.fallback && 'from' in spec.fallback) return spec.fallback.from(body);
  return undefined;
}

/** The entry as GET would show the declaration's example body once created. */
export function entryExample(resource: Resource): Record<string, unknown> {
  const example: Record<string, unknown> = { id: 1 };
  const { example: body } = resource.declaration;
  const { outputs } = resource;
  for (const name of resource.shownFields) example[name] = exampleValue(resource, name, body);
  for (const [name, output] of Object.entries(outputs)) example[name] = output.example;
  return { ...example, version: 1, created_at: EXAMPLE_TIME, updated_at: EXAMPLE_TIME };
}

/**
 * A PATCH body for the docs page's "Try it out": one field that references no other entry (a PATCH
 * example must not move a server to another client), preferably one outside every unique key, so
 * that sending it twice changes that field once and nothing else.
 */
export function patchExample(resource: Resource): Record<string, unknown> {
  const unique = new Set((resource.declaration.unique ?? []).flatMap((key) => key.fields));
  const { fields, example } = resource.declaration;
  const plain = resource.shownFields.filter((name) => !fields[name].reference);
  const field = plain.find((name) => !unique.has(name)) ?? plain[plain.length - 1];
  return { [field]: exampleValue(resource, field, example) };
}

/** `label` with its indefinite article, as it is said: an SSH key, a DNS alias, an environment. */
export const a = (label: string) => `${/^([aeiouAEIOU]|[FHLMNRSX][A-Z])/.test(label) ? 'an' : 'a'} ${label}`;

/** `label` in the plural: tags, DNS aliases, SSH keys. */
export const plural = (label: string) => `${label}${label.endsWith('s') ? 'es' : 's'}`;

/** The entry schema, with its example. */
export const documentedEntrySchema = (resource: Resource): JsonSchema => ({
  ...entrySchema(resource),
  example: entryExample(resource),
});

/** A boolean input takes true/false and the integers 0 and 1 (PmaControl's clients send those). */
const acceptingZeroOne = (schema: JsonSchema): JsonSchema => ({
  ...schema,
  type: ['boolean', 'integer'],
  enum: [true, false, 0, 1],
  description: `${schema.description ?? ''} (true/false, or 1/0)`.trim(),
});

const withDefault = (schema: JsonSchema, value: unknown) =>
  `${schema.description ?? ''}${schema.description ? '. ' : ''}Default when left out: ${JSON.stringify(value)}.`;

/** The request body as documented: the validated fields plus what is accepted and set aside. */
export function documentedWriteSchema(resource: Resource, mode: WriteMode): JsonSchema {
  const base = writeSchema(resource, mode);
  const properties = { ...(base.properties as Record<string, JsonSchema>) };
  for (const [field, spec] of Object.entries(resource.declaration.fields)) {
    if (properties[field].type === 'boolean') properties[field] = acceptingZeroOne(properties[field]);
    const { default: _default, ...schema } = properties[field];
    // Said in words, not with `default`: generators (openapi-typescript) make a field with a default required.
    if (_default !== undefined) properties[field] = { ...schema, description: withDefault(schema, _default) };
    for (const alias of spec.aliases)
      properties[alias] = { ...schema, description: `alias of ${field}`, deprecated: true };
  }
  for (const [alias, { parts, description, preferred }] of Object.entries(resource.declaration.objectAliases ?? {})) {
    const part = (field: string) => {
      const spec = resource.declaration.fields[field];
      return { ...spec.schema, description: `${field}: ${spec.description}` };
    };
    properties[alias] = {
      type: 'object',
      description,
      properties: Object.fromEntries(Object.entries(parts).map(([key, field]) => [key, part(field)])),
      additionalProperties: false,
      ...(preferred ? {} : { deprecated: true }),
    };
  }
  for (const name of ignoredInputs(resource))
    properties[name] ??= { readOnly: true, description: 'accepted and ignored' };
  const flag = resource.declaration.cryptedInput;
  if (flag) {
    properties[flag] = {
      type: ['boolean', 'integer'],
      enum: [true, false, 0, 1],
      description:
        "true or 1: the secrets are sent as PmaControl ciphertexts (made with PmaControl's CRYPT_KEY); the service " +
        'opens them with the key it was given (PMACONTROL_CRYPT_KEY_FILE) and seals them as usual. ' +
        'Without that key, or when a value does not decrypt: 422 on the secret field ' +
        '(`crypt_key_missing`, `undecryptable`). Absent, false or 0: the secrets are plain text.',
    };
  }
  if (mode !== 'create')
    properties.id = { type: 'integer', minimum: 1, description: 'ignored when equal to the path id, else 422' };
  if (resource.declaration.deletion === 'soft') {
    const meaning = {
      create: 'false is accepted and ignored; true is refused',
      replace: 'accepted and ignored (DELETE deletes, PATCH restores)',
      patch: 'false restores a soft-deleted entry; true is refused',
    };
    properties.is_deleted = acceptingZeroOne({ type: 'boolean', description: meaning[mode] });
  }
  return { ...base, properties };
}
