import { Filed } from '../../engine/filed.js';
import { allHold, type Condition } from '../conditions.js';
import { resourceOfEvent } from '../evolve.js';
import type { Operation } from '../policies/resource.js';
import { diffedFields, redactDiff } from '../redact.js';
import { type CollectionName, collectionOf } from '../resources.js';
import { type DiffMember, fieldDiff } from '../shared/diff.js';
import type { DomainEvent } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import { ROLES, type Role } from '../tokens/resource.js';
import type { ChangeShown, HeldBy } from './resource.js';

type Values = Record<string, unknown>;

/** One entry a request would change: before and after (undefined: none), and their difference. */
export interface Subject {
  resource: string;
  id: number | null;
  before?: Values;
  after?: Values;
  diff: DiffMember[];
}

/** A policy's entry as the check reads it, its lists made sets once (entries are never mutated). */
interface Compiled {
  entry: Values;
  where: readonly Condition[];
  transitions: boolean;
}

/** The value a policy's conditions need in one field (its first `eq` or `in`): where it is filed. */
function keyCondition(where: readonly Condition[]): { field: string; values: readonly unknown[] } | undefined {
  for (const condition of where) {
    if ('eq' in condition) return { field: condition.field, values: [condition.eq] };
    if (condition.in) return { field: condition.field, values: condition.in };
  }
  return undefined;
}

/** The enabled policies, filed by operation and resource (`*`: every resource) and their key condition. */
function file(state: ConfigState): { filed: Filed<Compiled>; operations: Set<string> } {
  const filed = new Filed<Compiled>();
  const operations = new Set<string>();
  for (const entry of state.collections.policies.values()) {
    if (entry.enabled !== true) continue;
    const where = entry.where as Condition[];
    const transitions = where.some((c) => 'changed' in c || 'from' in c || 'to' in c);
    const policy: Compiled = { entry, where, transitions };
    const resources = (entry.resources as string[]).length > 0 ? (entry.resources as string[]) : ['*'];
    for (const operation of entry.operations as string[]) {
      operations.add(operation);
      for (const resource of resources) filed.add(`${operation} ${resource}`, policy, keyCondition(where));
    }
  }
  return { filed, operations };
}

/** The filed policies of a state, made again only when its policies changed (Table.changeCount). */
const filedOf = new WeakMap<object, { count: number; filed: Filed<Compiled>; operations: Set<string> }>();

function filedPolicies(state: ConfigState) {
  const table = state.collections.policies;
  let known = filedOf.get(table);
  if (!known || known.count !== table.changeCount) {
    known = { count: table.changeCount, ...file(state) };
    filedOf.set(table, known);
  }
  return known;
}

/** Whether a policy's conditions hold on the entry after the change, or (without transitions) before it. */
function holds(policy: Compiled, subject: Subject): boolean {
  if (policy.where.length === 0) return true;
  if (allHold(policy.where, { diff: subject.diff, after: subject.after })) return true;
  return (
    !policy.transitions && subject.before !== undefined && allHold(policy.where, { diff: [], after: subject.before })
  );
}

/** The enabled policies that hold `operation` on any of the subjects, in id order. */
export function catching(state: ConfigState, operation: Operation, subjects: readonly Subject[]): Values[] {
  const { filed } = filedPolicies(state);
  const caught = new Set<Values>();
  for (const subject of subjects) {
    const candidates = new Set<Compiled>();
    const sides = [subject.before, subject.after];
    filed.candidates(`${operation} ${subject.resource}`, sides, candidates);
    filed.candidates(`${operation} *`, sides, candidates);
    for (const policy of candidates) if (holds(policy, subject)) caught.add(policy.entry);
  }
  return [...caught].sort((a, b) => (a.id as number) - (b.id as number));
}

/** Whether any enabled policy names `operation`: the cheap question asked before working out subjects. */
export const anyNames = (state: ConfigState, operation: Operation): boolean =>
  filedPolicies(state).operations.has(operation);

/** The entry of one event, before and after it, as the state stands before the event is folded. */
function subjectOf(event: DomainEvent, state: ConfigState): Subject | undefined {
  const name = resourceOfEvent(event.type) ?? (event.data.resource as CollectionName | undefined);
  if (!name || !(name in state.collections)) return undefined;
  const resource = collectionOf(name);
  const id = event.data.id as number;
  const current = state.collections[name].get(id) as Values | undefined;
  let after: Values | undefined = current;
  const { events } = resource;
  if (event.type === events.created) after = event.data;
  else if (event.type === events.updated) after = { ...current, ...(event.data.changes as Values) };
  else if (event.type === events.restored) after = { ...current, is_deleted: false };
  else if (event.type === events.deleted)
    after = resource.declaration.deletion === 'soft' ? { ...current, is_deleted: true } : undefined;
  else if (event.type === events.reverted) after = event.data.values as Values;
  return { resource: name, id, before: current, after, diff: fieldDiff(diffedFields(name), current, after) };
}

/** The entries the decided events change (or name: a secret read), one subject each, first event first. */
export function subjectsOf(events: readonly DomainEvent[], state: ConfigState): Subject[] {
  const seen = new Set<string>();
  const subjects: Subject[] = [];
  for (const event of events) {
    const subject = subjectOf(event, state);
    const key = subject && `${subject.resource}/${subject.id}`;
    if (!subject || seen.has(key!)) continue;
    seen.add(key!);
    subjects.push(subject);
  }
  return subjects;
}

/** A subject as an approval shows it: its diff with secrets `[redacted]`. */
export function shown(subject: Subject): ChangeShown {
  const diff = redactDiff(subject.resource, subject.diff);
  // An entry to create gets its id when the request is executed.
  return { resource: subject.resource, id: subject.before === undefined ? null : subject.id, diff };
}

/** A policy as an approval keeps it. */
export const heldBy = (policy: Values): HeldBy => ({
  id: policy.id as number,
  name: policy.name as string,
  approvals: policy.approvals as number,
  roles: policy.approver_roles as string[],
  tokens: policy.approver_tokens as string[],
});

const rank = (role: string) => ROLES.indexOf(role as Role);

/** Whether a token (its name and role) may approve for a policy: named, or of a role it names (or higher). */
export const mayApprove = (policy: HeldBy, actor: string, role: string): boolean =>
  policy.tokens.includes(actor) || (rank(role) >= 0 && policy.roles.some((named) => rank(role) >= rank(named)));
