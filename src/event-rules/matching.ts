import type { ChangeItem } from '../application/service.js';
import { allHold, type Condition, needsEntry } from '../domain/conditions.js';
import type { EntryRecord } from '../engine/table.js';

/** An event rule as the deliverer reads it from its entry. */
export interface Rule {
  id: number;
  name: string;
  enabled: boolean;
  on: string[];
  types: string[];
  where: Condition[];
  url: string;
  /** The sealed signing key. */
  secret: string;
  /** The entry's version: a rule changed is read again. */
  version: number;
}

export const ruleOf = (entry: EntryRecord): Rule => ({
  id: entry.id,
  name: entry.name as string,
  enabled: entry.enabled as boolean,
  on: entry.on as string[],
  types: entry.types as string[],
  where: entry.where as Condition[],
  url: entry.target_url as string,
  secret: entry.target_secret as string,
  version: entry.version as number,
});

/**
 * Whether a change is one the rule sends: of one of its resources, of one of its types (if it names
 * any), and every condition holds on the change's diff and the entry as the change left it (read
 * from the change log at the change's revision, only when a condition needs more than the diff).
 */
export async function matches(
  rule: Rule,
  item: ChangeItem,
  entryAfter: (item: ChangeItem) => Promise<EntryRecord | undefined>,
): Promise<boolean> {
  const alone = matchesChange(rule, item);
  if (alone !== 'entry') return alone;
  return allHold(rule.where, { diff: item.diff, after: await entryAfter(item) });
}

/** `matches` without waiting: undefined when it needs the entry after the change and `entry` is not it. */
export function matchesNow(rule: Rule, item: ChangeItem, entry: EntryRecord | undefined): boolean | undefined {
  const alone = matchesChange(rule, item);
  if (alone !== 'entry') return alone;
  return entry ? allHold(rule.where, { diff: item.diff, after: entry }) : undefined;
}

/** What the change alone says: it matches, it does not, or a condition needs the entry after it. */
function matchesChange(rule: Rule, item: ChangeItem): boolean | 'entry' {
  if (item.resource === null || item.id === null || !rule.on.includes(item.resource)) return false;
  if (rule.types.length > 0 && !rule.types.includes(item.type)) return false;
  if (rule.where.length === 0) return true;
  const inDiff = (condition: Condition) => item.diff.some((member) => member.field === condition.field);
  if (!needsEntry(rule.where.filter((condition) => !inDiff(condition))))
    return allHold(rule.where, { diff: item.diff, after: undefined });
  return 'entry';
}

/** The body of a delivery: the rule and the change, as the change log shows it (secrets redacted). */
export const deliveryBody = (rule: Rule, item: ChangeItem): string =>
  JSON.stringify({ rule: { id: rule.id, name: rule.name }, change: item });
