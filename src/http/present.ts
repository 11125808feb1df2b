import type { Resource } from '../domain/shared/types.js';
import type { AnyEntry } from '../domain/state.js';
import { COMMON_READ_ONLY } from '../schemas/resource.js';
import { SCHEMAS } from '../schemas/resources.js';

/** An entry as clients see it: secrets replaced by `has_*`, read-only fields added, fields in schema order. */
export function present(resource: Resource, entry: AnyEntry): Record<string, unknown> {
  const source = entry as unknown as Record<string, unknown>;
  const schema = SCHEMAS[resource];
  const out: Record<string, unknown> = { id: source.id };
  for (const [name, field] of Object.entries(schema.fields)) if (!field.secret) out[name] = source[name];
  const derived: Record<string, unknown> = {
    date: source.created_at,
    added_on: source.created_at,
    has_passwd: typeof source.passwd === 'string',
    has_private_key: typeof source.private_key === 'string',
    is_deleted: source.is_deleted === true,
  };
  for (const name of Object.keys(schema.outputExtras)) out[name] = derived[name];
  for (const name of COMMON_READ_ONLY.slice(1)) out[name] = source[name];
  return out;
}
