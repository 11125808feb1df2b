import type { WebhookSettings } from '../config.js';
import { type Condition, conditionProblems } from '../domain/conditions.js';
import type { CheckedEntry, DecideRules } from '../domain/decide.js';
import { CONFIGURATION_NAMES, collectionOf } from '../domain/resources.js';

/** What a rule may send the changes of: the configuration's resources, and the approvals (section 16). */
const SENT = [...CONFIGURATION_NAMES, 'approvals'];

import { type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import { urlProblem } from './target.js';

const fail = (field: string, code: string, message: string): FieldError => ({ field, code, message });

/** What is wrong with `on` and `types`; `known`: the resources of `on` that exist. */
function targetsProblems(on: readonly string[], known: readonly string[], types: readonly string[]): FieldError[] {
  const problems: FieldError[] = [];
  if (on.length === 0) problems.push(fail('on', 'required', 'must name at least one resource'));
  on.forEach((name, index) => {
    if (!SENT.includes(name))
      problems.push(fail(`on[${index}]`, 'unknown_resource', `"${name}" is not a resource (${SENT.join(', ')})`));
    else if (on.indexOf(name) !== index) problems.push(fail(`on[${index}]`, 'duplicate', `"${name}" is listed twice`));
  });
  // Besides its own, the events that name an entry of it without changing it: a secret read, break glass.
  const eventTypes = new Set([
    ...known.flatMap((name) => [
      ...Object.values(collectionOf(name).events),
      ...(collectionOf(name).declaration.updateEvents ?? []),
    ]),
    'SecretRevealed',
    'BreakGlassUsed',
  ]);
  types.forEach((type, index) => {
    if (known.length > 0 && !eventTypes.has(type))
      problems.push(fail(`types[${index}]`, 'unknown_type', `"${type}" is no event type of ${known.join(', ')}`));
  });
  return problems;
}

/** What is wrong with a rule as a write would leave it: its resources, types, conditions and target. */
export function ruleProblems(rule: Record<string, unknown>, settings: WebhookSettings): FieldError[] {
  const on = rule.on as string[];
  const known = on.filter((name) => SENT.includes(name));
  const problems = targetsProblems(on, known, rule.types as string[]);
  // A condition tests a field every resource of `on` shows (a secret is `[redacted]` in every change).
  const fieldWhy = (field: string) => {
    const missing = known.filter((name) => !collectionOf(name).shownFields.includes(field));
    return missing.length > 0
      ? `${missing.join(', ')} ha${missing.length > 1 ? 've' : 's'} no field "${field}" to test`
      : undefined;
  };
  problems.push(...conditionProblems(rule.where as Condition[], fieldWhy, 'where'));
  const url = urlProblem(rule.target_url as string, settings.allowedHosts);
  if (url) problems.push(fail('target_url', 'invalid_target', url));
  return problems;
}

/** The wing's rule on every write (DecideRules): an event rule with a problem is a 422 listing them. */
export function eventRuleChecks(settings: WebhookSettings): DecideRules {
  return {
    check(entry: CheckedEntry) {
      if (entry.resource.name !== 'event-rules') return;
      const problems = ruleProblems(entry.next, settings);
      if (problems.length > 0) throw new ValidationFailed(problems);
    },
  };
}
