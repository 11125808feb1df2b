import { type ResourceName, resourceOf } from '../domain/resources.js';
import type { EntryRecord } from '../domain/shared/collection.js';
import { META_FIELDS } from '../schemas/write.js';

type Shape = { fields: readonly string[]; outputs: [string, (entry: Record<string, unknown>) => unknown][] };

const shapes = new Map<string, Shape>();

/** Per resource, worked out once: the fields shown (declaration order, secrets left out) and the derived ones. */
function shapeOf(resource: ResourceName): Shape {
  let shape = shapes.get(resource);
  if (!shape) {
    const declared = resourceOf(resource);
    const outputs = Object.entries(declared.outputs).map(([name, o]) => [name, o.from] as Shape['outputs'][0]);
    shape = { fields: declared.shownFields, outputs };
    shapes.set(resource, shape);
  }
  return shape;
}

/** An entry as clients see it: secrets replaced by `has_*`, read-only fields added, in declaration order. */
export function present(resource: ResourceName, entry: EntryRecord): Record<string, unknown> {
  const shape = shapeOf(resource);
  const out: Record<string, unknown> = { id: entry.id };
  for (const name of shape.fields) out[name] = entry[name];
  for (const [name, from] of shape.outputs) out[name] = from(entry);
  for (const name of META_FIELDS) out[name] = entry[name];
  return out;
}
