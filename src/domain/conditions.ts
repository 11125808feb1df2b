import type { DiffMember } from './shared/diff.js';
import { sameValue } from './shared/diff.js';
import type { FieldError } from './shared/errors.js';
import type { JsonSchema } from './shared/fields.js';

/**
 * The condition language of event rules (and of whatever else asks "does this change match"): each
 * condition names a field and tests it on one change — its diff (the field's value before and after
 * the change) and the entry as the change left it. All conditions of a list must hold.
 *
 * - `eq`: the field's value after the change equals this one;
 * - `in`: the field's value after the change is one of these;
 * - `changed: true`: the field is a member of the change's diff (its value changed);
 * - `from` / `to`: a transition — the field changed by this change, from this value (`from`) and/or
 *   to this value (`to`). A later change that leaves the field alone does not hold it again.
 *
 * One condition may combine tests on its field (`{"field":"port","changed":true,"in":[3306,3307]}`):
 * each must hold.
 */

/** A value a condition compares with: what a field of an entry holds. */
export type Scalar = string | number | boolean | null;

export interface Condition {
  field: string;
  eq?: Scalar;
  in?: Scalar[];
  changed?: true;
  from?: Scalar;
  to?: Scalar;
}

/** What a condition is tested on: the change's diff and the entry as the change left it (undefined: deleted). */
export interface ChangeSubject {
  diff: readonly DiffMember[];
  after: Record<string, unknown> | undefined;
}

const SCALAR: JsonSchema = { type: ['string', 'number', 'boolean', 'null'] };

/** The JSON Schema of one condition, for validation and the OpenAPI document. */
export const CONDITION_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    field: { type: 'string', minLength: 1, maxLength: 64, description: 'the field tested, of every resource of `on`' },
    eq: { ...SCALAR, description: "the field's value after the change is this one" },
    in: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: SCALAR,
      description: "the field's value after the change is one of these",
    },
    changed: { const: true, description: 'the change changed the field (it is in its diff)' },
    from: { ...SCALAR, description: 'the change changed the field from this value' },
    to: { ...SCALAR, description: 'the change changed the field to this value' },
  },
  required: ['field'],
  additionalProperties: false,
  anyOf: ['eq', 'in', 'changed', 'from', 'to'].map((test) => ({ required: [test] })),
};

const has = (condition: Condition, test: keyof Condition) => Object.hasOwn(condition, test);

/** The value of `field` in the entry after the change: the diff's after, else the entry's own value. */
function valueAfter(subject: ChangeSubject, field: string, member: DiffMember | undefined): unknown {
  if (member) return member.after;
  return subject.after?.[field] ?? null;
}

/** Whether one condition holds for a change. */
export function conditionHolds(condition: Condition, subject: ChangeSubject): boolean {
  const member = subject.diff.find((m) => m.field === condition.field);
  const transition = has(condition, 'changed') || has(condition, 'from') || has(condition, 'to');
  if (transition && !member) return false;
  if (has(condition, 'from') && !sameValue(member!.before, condition.from)) return false;
  if (has(condition, 'to') && !sameValue(member!.after, condition.to)) return false;
  const value = valueAfter(subject, condition.field, member);
  if (has(condition, 'eq') && !sameValue(value, condition.eq)) return false;
  if (has(condition, 'in') && !condition.in!.some((one) => sameValue(value, one))) return false;
  return true;
}

/** Whether every condition holds (an empty list always does). */
export const allHold = (conditions: readonly Condition[], subject: ChangeSubject): boolean =>
  conditions.every((condition) => conditionHolds(condition, subject));

/** Whether the conditions need the entry after the change beyond what the diff says (`eq`, `in`). */
export const needsEntry = (conditions: readonly Condition[]): boolean =>
  conditions.some((condition) => has(condition, 'eq') || has(condition, 'in'));

/**
 * The conditions' problems against the fields a change may have: a field no resource in `fields`
 * has is a 422 on `<at>[i].field`; `from` and `to` that cannot both hold (equal) are one too.
 */
export function conditionProblems(
  conditions: readonly Condition[],
  fields: (field: string) => string | undefined,
  at: string,
): FieldError[] {
  const problems: FieldError[] = [];
  conditions.forEach((condition, index) => {
    const why = fields(condition.field);
    if (why) problems.push({ field: `${at}[${index}].field`, code: 'unknown_field', message: why });
    if (has(condition, 'from') && has(condition, 'to') && sameValue(condition.from, condition.to))
      problems.push({
        field: `${at}[${index}]`,
        code: 'invalid_value',
        message: 'from and to are the same value: a change of the field never holds it',
      });
  });
  return problems;
}
