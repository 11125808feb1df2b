import { compiled, member } from './codegen.js';

/** One member of a diff, as domain/shared/diff.ts defines it. */
export interface Member {
  field: string;
  before: unknown;
  after: unknown;
}

export type Differ = (before?: Record<string, unknown>, after?: Record<string, unknown>) => Member[];

/**
 * `fieldDiff` of domain/shared/diff.ts for one list of fields, compiled once: each field read by its
 * own name instead of through a loop over names, compared with `same` (bench/replay.ts: a replay
 * diffs every event).
 */
export function compiledDiffer(fields: readonly string[], same: (a: unknown, b: unknown) => boolean): Differ {
  const steps = fields.map(
    (field, i) => `was = before === undefined ? null : (${member('before', field)} ?? null);
      is = after === undefined ? null : (${member('after', field)} ?? null);
      if (!same(was, is)) members.push({ field: fields[${i}], before: was, after: is });`,
  );
  const body = `const members = []; let was, is;\n${steps.join('\n')}\nreturn members;`;
  return compiled<Differ>(['before', 'after'], body, { same, fields });
}
