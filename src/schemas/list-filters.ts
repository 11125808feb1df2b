import type { Resource } from '../domain/shared/declaration.js';
import type { JsonSchema } from '../domain/shared/fields.js';
import { MAX_ID } from '../domain/shared/types.js';

/**
 * The filters of a resource's list, derived from its declaration: what `GET /config/<resource>`
 * reads (http/request.ts) and what the OpenAPI document lists for it (openapi/config-reads.ts).
 */

/** The query parameters of lists, per resource, with the schema their values are read with. */
export function listParameters(resource: Resource): Record<string, JsonSchema> {
  const { fields, deletion } = resource.declaration;
  const params: Record<string, JsonSchema> = { id: { type: 'integer', minimum: 1, maximum: MAX_ID } };
  for (const name of resource.shownFields) {
    const spec = fields[name];
    if (spec.schema.type === 'array') {
      if (spec.filterAs) params[spec.filterAs] = spec.schema.items as JsonSchema;
    } else params[name] = spec.schema;
  }
  if (deletion === 'soft') params.is_deleted = { type: 'boolean' };
  return params;
}

export const searchedFields = (resource: Resource) =>
  Object.entries(resource.declaration.fields)
    .filter(([, spec]) => spec.search)
    .map(([name]) => name);
