import type { Resource } from '../domain/shared/types.js';
import { RESOURCES } from '../domain/shared/types.js';
import type { AnyEntry } from '../domain/state.js';
import { COMMON_READ_ONLY, shownFields } from '../schemas/resource.js';
import { SCHEMAS } from '../schemas/resources.js';

type Source = Record<string, unknown>;

/** Read-only fields derived from the stored entry. */
const DERIVED: Record<string, (entry: Source) => unknown> = {
  date: (entry) => entry.created_at,
  added_on: (entry) => entry.created_at,
  has_passwd: (entry) => typeof entry.passwd === 'string',
  has_private_key: (entry) => typeof entry.private_key === 'string',
  is_deleted: (entry) => entry.is_deleted === true,
};

/** Per resource, worked out once: the stored fields shown (schema order, secrets left out) and the derived ones. */
const SHAPES = Object.fromEntries(
  RESOURCES.map((resource) => {
    const schema = SCHEMAS[resource];
    return [
      resource,
      { fields: shownFields(schema), derived: Object.keys(schema.outputExtras), timestamps: COMMON_READ_ONLY.slice(1) },
    ];
  }),
) as Record<Resource, { fields: string[]; derived: string[]; timestamps: string[] }>;

/** An entry as clients see it: secrets replaced by `has_*`, read-only fields added, fields in schema order. */
export function present(resource: Resource, entry: AnyEntry): Source {
  const source = entry as unknown as Source;
  const shape = SHAPES[resource];
  const out: Source = { id: source.id };
  for (const name of shape.fields) out[name] = source[name];
  for (const name of shape.derived) out[name] = DERIVED[name](source);
  for (const name of shape.timestamps) out[name] = source[name];
  return out;
}
