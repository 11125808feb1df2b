/**
 * The engine's one code generator: functions compiled once per shape of data (as ajv compiles a
 * schema), in which every field is read or written by its own name instead of through a loop over
 * names. The entry factories, the creation data, the diff of two versions and the JSON of a
 * presented entry are made with it (bench/http.ts create and read-one, bench/replay.ts).
 */

/** A function made from `body`, with `params` as its parameters; `bound` values are passed first, once. */
export function compiled<F>(params: readonly string[], body: string, bound: Record<string, unknown> = {}): F {
  const names = Object.keys(bound);
  const outer = new Function(...names, `return (${params.join(', ')}) => {\n${body}\n};`);
  return outer(...names.map((name) => bound[name])) as F;
}

/** A JavaScript expression reading `key` of the object named `object`. */
export const member = (object: string, key: string): string => `${object}[${JSON.stringify(key)}]`;

/** A JavaScript string literal of `text`. */
export const literal = (text: string): string => JSON.stringify(text);

export type ObjectMaker = (parts: readonly Record<string, unknown>[]) => Record<string, unknown>;

/**
 * In an object literal, `"__proto__": value` sets the prototype instead of making a field, so an
 * object with such a key is made field by field: the one guard against that hazard.
 */
const PROTO = '__proto__';

/** An object made of `parts` field by field (later parts win): slower, and safe for any key. */
export const ownFields: ObjectMaker = (parts) => {
  const made = {};
  for (const part of parts)
    for (const key of Object.keys(part))
      Object.defineProperty(made, key, { value: part[key], enumerable: true, writable: true, configurable: true });
  return made as Record<string, unknown>;
};

/**
 * A function that makes one object of parts holding `keys` (part by part), as one object literal:
 * each key once, where it first appears, its value from the last part that has it. V8 lays the
 * fields of a literal inside the object and gives objects of one literal one hidden class, where an
 * object spread from a large one gets a property array several times its size.
 */
export function objectMaker(keys: readonly (readonly string[])[]): ObjectMaker {
  const from = new Map<string, number>();
  keys.forEach((partKeys, i) => {
    for (const key of partKeys) from.set(key, i);
  });
  if (from.has(PROTO)) return ownFields;
  const fields = [...from].map(([key, i]) => `${literal(key)}: ${member(`parts[${i}]`, key)}`);
  return compiled<ObjectMaker>(['parts'], `return { ${fields.join(', ')} };`);
}

/** Whether an object has a key that an object literal cannot make (see PROTO). */
export const hasUnsafeKey = (object: Record<string, unknown>): boolean => Object.hasOwn(object, PROTO);
