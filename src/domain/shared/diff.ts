/**
 * A field difference: the one equality of two field values and the one diff of two versions of an
 * entry, used by the deciders (what a write changes), the change log (what an event changed), the
 * differences between two moments and PmaControl's drift. The engine compiles the same diff per
 * resource for the fold (engine/differ.ts), given `sameValue`.
 */

/** One member of a diff: a field, its value before and after (null where there is none). */
export interface DiffMember {
  field: string;
  before: unknown;
  after: unknown;
}

/** Two field values as read from JSON are the same: primitives when `===`; lists and objects by their JSON. */
export const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

/** The members of `fields` whose values differ between two versions (a missing side or value is null). */
export function fieldDiff(
  fields: readonly string[],
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): DiffMember[] {
  const members: DiffMember[] = [];
  for (const field of fields) {
    const was = before?.[field] ?? null;
    const is = after?.[field] ?? null;
    if (!sameValue(was, is)) members.push({ field, before: was, after: is });
  }
  return members;
}
