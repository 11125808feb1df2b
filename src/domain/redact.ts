import { collectionOf } from './resources.js';
import type { DiffMember } from './shared/diff.js';

/**
 * Secrets as every answer, change row and leaf shows them: `[redacted]` where a value is held.
 * Which fields are secret is each resource's declaration's to say.
 */

export const REDACTED = '[redacted]';

/** The fields a diff of a resource's entries compares: its declared fields, and the soft-delete flag. */
export function diffedFields(resource: string): readonly string[] {
  const declared = collectionOf(resource);
  return declared.declaration.deletion === 'soft' ? [...declared.fieldNames, 'is_deleted'] : declared.fieldNames;
}

/** The event's data with its secrets (also inside `changes` and `values`) replaced by `[redacted]`. */
export function redactData(resource: string | undefined, data: Record<string, unknown>): Record<string, unknown> {
  if (!resource) return data;
  const secrets = collectionOf(resource).secretFields;
  if (secrets.length === 0) return data;
  // Copied only where a secret is there to hide: most events carry none (a PATCH of a port).
  const redact = (values: Record<string, unknown>) => {
    let copy: Record<string, unknown> | undefined;
    for (const field of secrets) {
      if (!(field in values) || values[field] === null) continue;
      copy ??= { ...values };
      copy[field] = REDACTED;
    }
    return copy ?? values;
  };
  let copy = redact(data);
  for (const nested of ['changes', 'values']) {
    const inner = copy[nested];
    if (!inner || typeof inner !== 'object') continue;
    const hidden = redact(inner as Record<string, unknown>);
    if (hidden === inner) continue;
    if (copy === data) copy = { ...data };
    copy[nested] = hidden;
  }
  return copy;
}

/** A diff as shown: a secret is `[redacted]` on whichever side holds a value. */
export function redactDiff(resource: string, diff: DiffMember[]): DiffMember[] {
  const secrets = collectionOf(resource).secretFields;
  const hide = (value: unknown) => (value === null ? null : REDACTED);
  return diff.map((member) =>
    secrets.includes(member.field) ? { ...member, before: hide(member.before), after: hide(member.after) } : member,
  );
}
