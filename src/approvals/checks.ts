import { type Condition, conditionProblems } from '../domain/conditions.js';
import type { CheckedEntry, DecideRules } from '../domain/decide.js';
import { GATED_OPERATIONS } from '../domain/policies/resource.js';
import { collectionOf, RESOURCE_NAMES } from '../domain/resources.js';
import { type FieldError, ValidationFailed } from '../domain/shared/errors.js';

const fail = (field: string, code: string, message: string): FieldError => ({ field, code, message });

/** What a policy can hold the entries of: every resource, the tokens (their issue). */
const HELD: readonly string[] = [...RESOURCE_NAMES, 'tokens'];

function operationsProblems(operations: readonly string[]): FieldError[] {
  const problems: FieldError[] = [];
  if (operations.length === 0) problems.push(fail('operations', 'required', 'must name at least one operation'));
  operations.forEach((operation, index) => {
    if (operations.indexOf(operation) !== index)
      problems.push(fail(`operations[${index}]`, 'duplicate', `"${operation}" is listed twice`));
    else if (!GATED_OPERATIONS.includes(operation as never))
      problems.push(
        fail(
          `operations[${index}]`,
          'not_gated',
          `this version cannot hold "${operation}" for approval (it holds ${GATED_OPERATIONS.join(', ')})`,
        ),
      );
  });
  return problems;
}

function resourcesProblems(resources: readonly string[]): FieldError[] {
  return resources.flatMap((name, index) => {
    if (!HELD.includes(name))
      return [fail(`resources[${index}]`, 'unknown_resource', `"${name}" is not a resource (${HELD.join(', ')})`)];
    if (resources.indexOf(name) !== index)
      return [fail(`resources[${index}]`, 'duplicate', `"${name}" is listed twice`)];
    return [];
  });
}

/** What is wrong with a policy as a write would leave it. */
export function policyProblems(policy: Record<string, unknown>): FieldError[] {
  const resources = policy.resources as string[];
  const problems = [...operationsProblems(policy.operations as string[]), ...resourcesProblems(resources)];
  const known = (resources.length > 0 ? resources : HELD).filter((name) => HELD.includes(name));
  // With resources named, every one must have the field; with none, at least one resource must.
  const has = (name: string, field: string) => [...collectionOf(name).shownFields, 'is_deleted'].includes(field);
  const fieldWhy = (field: string) => {
    const missing = known.filter((name) => !has(name, field));
    if (resources.length === 0)
      return missing.length === known.length ? `no resource has a field "${field}"` : undefined;
    return missing.length > 0
      ? `${missing.join(', ')} ha${missing.length > 1 ? 've' : 's'} no field "${field}"`
      : undefined;
  };
  problems.push(...conditionProblems(policy.where as Condition[], fieldWhy, 'where'));
  if ((policy.approver_roles as string[]).length === 0 && (policy.approver_tokens as string[]).length === 0)
    problems.push(fail('approvers', 'required', 'names nobody: give roles or token names that may approve'));
  return problems;
}

/** The wing's rule on every write (DecideRules): a policy with a problem is a 422 listing them. */
export const policyChecks: DecideRules = {
  check(entry: CheckedEntry) {
    if (entry.resource.name !== 'policies') return;
    const problems = policyProblems(entry.next);
    if (problems.length > 0) throw new ValidationFailed(problems);
  },
};
