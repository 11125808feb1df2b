import { type ResourceName, resourceOf } from '../domain/resources.js';
import { compiled, literal, member } from '../engine/codegen.js';
import type { EntryRecord } from '../engine/table.js';
import { META_FIELDS } from '../schemas/write.js';

type Output = (entry: Record<string, unknown>) => unknown;
/** Where a shown member's value comes from: a field of the entry, or a derived output. */
type Source = { field: string } | { output: Output };
type Serialise = (
  entry: EntryRecord,
  outputs: readonly Output[],
  json: (value: unknown) => string | undefined,
) => string;

interface Shape {
  /** The members shown, in order, each once (a later source of the same name wins, as an assignment would). */
  members: [string, Source][];
  outputs: Output[];
  serialise: Serialise;
}

const shapes = new Map<string, Shape>();

/** Per resource, worked out once: the members shown (declaration order, secrets left out, derived ones after). */
function shapeOf(resource: ResourceName): Shape {
  let shape = shapes.get(resource);
  if (!shape) {
    const declared = resourceOf(resource);
    const members = new Map<string, Source>([['id', { field: 'id' }]]);
    for (const name of declared.shownFields) members.set(name, { field: name });
    for (const [name, o] of Object.entries(declared.outputs)) members.set(name, { output: o.from });
    for (const name of META_FIELDS) members.set(name, { field: name });
    const list = [...members];
    const outputs = list.flatMap(([, source]) => ('output' in source ? [source.output] : []));
    shape = { members: list, outputs, serialise: compile(list) };
    shapes.set(resource, shape);
  }
  return shape;
}

/**
 * The JSON text of one member's value as JSON.stringify writes it inside an object; undefined when
 * it leaves the member out (undefined, a function, a symbol).
 */
function valueJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return value === null ? 'null' : JSON.stringify(value);
    default:
      return JSON.stringify(value);
  }
}

/**
 * A resource's members written one after another, keys escaped once, compiled once per resource:
 * the same text as JSON.stringify(present(entry)) without making the presented object first
 * (bench/http.ts read-one and list).
 */
function compile(members: [string, Source][]): Serialise {
  let output = 0;
  const steps = members.map(([name, source]) => {
    const read = 'field' in source ? member('entry', name) : `outputs[${output++}](entry)`;
    return `j = json(${read}); if (j !== undefined) { s += sep + ${literal(`${JSON.stringify(name)}:`)} + j; sep = ','; }`;
  });
  return compiled<Serialise>(
    ['entry', 'outputs', 'json'],
    `let s = '{', sep = '', j;\n${steps.join('\n')}\nreturn s + '}';`,
  );
}

/** An entry as clients see it: secrets replaced by `has_*`, read-only fields added, in declaration order. */
export function present(resource: ResourceName, entry: EntryRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, source] of shapeOf(resource).members)
    out[name] = 'field' in source ? entry[name] : source.output(entry);
  return out;
}

/** `JSON.stringify(present(resource, entry))`, written directly. */
export function presentJson(resource: ResourceName, entry: EntryRecord): string {
  const shape = shapeOf(resource);
  return shape.serialise(entry, shape.outputs, valueJson);
}
