import { CONDITION_SCHEMA, type Condition } from '../conditions.js';
import { defineResource } from '../shared/declaration.js';
import { boolean, integer, list, text } from '../shared/fields.js';
import { ROLES } from '../tokens/resource.js';

/**
 * What a policy can make wait for approval: a configuration write (`create`, `update` — PUT and
 * PATCH —, `delete`, `revert`), a secret read, an import, a token's issue, a change of a policy, a
 * change set's merge; and one this version refuses in a policy: PmaControl's push cannot wait (its
 * caller knows no approvals).
 */
export const OPERATIONS = [
  'create',
  'update',
  'delete',
  'revert',
  'secret-read',
  'import',
  'token-issue',
  'policy-change',
  'change-set-merge',
  'push',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** The operations a policy may name in this version (see OPERATIONS). */
export const GATED_OPERATIONS: readonly Operation[] = OPERATIONS.filter((operation) => operation !== 'push');

/** An ISO 8601 duration of days, hours, minutes and seconds: `PT4H`, `P1DT12H`, `PT90M`. */
export const DURATION_PATTERN = '^P(?!$)([0-9]{1,4}D)?(T(?=[0-9])([0-9]{1,5}H)?([0-9]{1,6}M)?([0-9]{1,8}S)?)?$';

/**
 * An approval policy (section 16): which operations on which entries wait for how many approvals by
 * whom. Its entries are for admins only, served at `/fr/api/policies`; the approvals wing
 * (src/approvals/) checks them on every write and holds the requests they catch.
 */
export const policies = defineResource({
  name: 'policies',
  title: 'Policy',
  label: 'policy',
  plural: 'Policies',
  category: 'policy',
  description: 'Which operations wait for the approval of other people (four eyes), on which entries, by whom.',
  scope: 'admin',
  fields: {
    name: text(1, 100, { required: true, search: true, description: 'unique (case-insensitive)' }),
    enabled: boolean({ default: true, description: 'a disabled policy holds nothing' }),
    operations: list<Operation>({ type: 'string', enum: [...OPERATIONS] }, OPERATIONS.length, {
      required: true,
      description:
        'the operations it holds: `create`, `update` (PUT, PATCH), `delete`, `revert`, `secret-read`, `import`, ' +
        '`token-issue`, `policy-change`, `change-set-merge` (`push` is refused: PmaControl cannot wait for an approval)',
    }),
    resources: list<string>({ type: 'string', minLength: 1, maxLength: 40 }, 20, {
      default: [],
      description: 'the resources whose entries it holds (`servers` …; `tokens` for `token-issue`); empty: every one',
    }),
    where: list<Condition>(CONDITION_SCHEMA, 20, {
      default: [],
      description:
        'conditions on the entry before or after the change (`eq`, `in`; `changed`, `from`/`to` on the change ' +
        'itself): the policy holds an operation when they all hold on either side; empty: always',
    }),
    approvals: integer(1, 10, {
      default: 2,
      description: 'how many approvers, other than the requester, must approve',
    }),
    approver_roles: list<string>({ type: 'string', enum: [...ROLES] }, ROLES.length, {
      default: [],
      description: 'tokens of these roles (or a higher one) may approve',
    }),
    approver_tokens: list<string>({ type: 'string', minLength: 1, maxLength: 64 }, 100, {
      default: [],
      description: 'tokens of these names may approve',
    }),
    ttl: text(3, 30, {
      default: 'PT4H',
      pattern: DURATION_PATTERN,
      description: 'how long a request it holds may wait for its votes and its execution (ISO 8601: `PT4H`, `P2D`)',
    }),
  },
  unique: [{ fields: ['name'], caseInsensitive: ['name'], describe: (policy) => `policy name "${policy.name}"` }],
  objectAliases: {
    approvers: {
      description: 'who may approve, at once: `{"roles": ["admin"], "tokens": ["alice"]}`',
      parts: { roles: 'approver_roles', tokens: 'approver_tokens' },
      preferred: true,
    },
  },
  deletion: 'hard',
  example: {
    name: 'prod-needs-two',
    operations: ['delete', 'update', 'secret-read'],
    resources: ['servers'],
    where: [{ field: 'id_environment', in: [1] }],
    approvals: 2,
    approver_roles: ['admin'],
    ttl: 'PT4H',
  },
});

/** A duration of DURATION_PATTERN in milliseconds. */
export function durationMs(text: string): number {
  const match = new RegExp(DURATION_PATTERN).exec(text);
  if (!match) throw new Error(`"${text}" is not an ISO 8601 duration`);
  const part = (index: number) => Number.parseInt(match[index] ?? '0', 10);
  return (((part(1) * 24 + part(3)) * 60 + part(4)) * 60 + part(5)) * 1000;
}
