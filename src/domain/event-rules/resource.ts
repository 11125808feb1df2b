import { CONDITION_SCHEMA, type Condition } from '../conditions.js';
import { defineResource } from '../shared/declaration.js';
import { boolean, type FieldSpec, list, secret, text } from '../shared/fields.js';

/** A signing key as the Standard Webhooks specification writes it: `whsec_` then base64 of 24 to 64 bytes. */
export const SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]{32,86}={0,2}$';

const signingKey: FieldSpec = {
  ...secret(38, 96, {
    description:
      'the signing key: `whsec_` then base64 of 24 to 64 bytes; made by the service when a creation leaves it ' +
      'out (shown once, in the 201 answer); write-only',
  }),
  made: { prefix: 'whsec_', bytes: 32 },
};
const signing = { ...signingKey, schema: { ...signingKey.schema, pattern: SECRET_PATTERN } } as typeof signingKey;

/**
 * An event rule (section 15): which changes to send where. Its entries are for admins only, served
 * at `/fr/api/event-rules`; what matches and delivers them is the event-rules wing
 * (src/event-rules/), which also checks `on`, `types` and the conditions' fields against the
 * resources (its rules on every write).
 */
export const eventRules = defineResource({
  name: 'event-rules',
  title: 'EventRule',
  label: 'event rule',
  plural: 'EventRules',
  category: 'eventRule',
  description: 'Which changes to send where, as signed HTTP POSTs (webhooks), in log order per rule, none lost.',
  scope: 'admin',
  fields: {
    name: text(1, 100, { required: true, search: true, description: 'unique (case-insensitive)' }),
    enabled: boolean({
      default: true,
      description: 'a disabled rule sends nothing; enabled again, it sees the changes recorded from then on',
    }),
    on: list<string>({ type: 'string', minLength: 1, maxLength: 40 }, 20, {
      required: true,
      description: 'the resources whose changes it sends (`servers`, `tags` …), at least one',
    }),
    types: list<string>({ type: 'string', minLength: 1, maxLength: 64 }, 50, {
      default: [],
      description: 'event types it sends (`ServerUpdated` …); empty: every type of those resources',
    }),
    where: list<Condition>(CONDITION_SCHEMA, 20, {
      default: [],
      description:
        'conditions that must all hold: `eq`, `in` (on the entry after the change), `changed`, `from`/`to` ' +
        '(a transition: the field changed by this change, from and/or to a value)',
    }),
    target_url: text(1, 2048, {
      required: true,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description: 'where the POSTs go: an http(s) URL',
    }),
    target_secret: signing,
  },
  unique: [{ fields: ['name'], caseInsensitive: ['name'], describe: (rule) => `event rule name "${rule.name}"` }],
  objectAliases: {
    target: {
      description: 'the target at once: `{"url": "https://…", "secret": "whsec_…"}`',
      parts: { url: 'target_url', secret: 'target_secret' },
      preferred: true,
    },
  },
  deletion: 'hard',
  example: {
    name: 'prod-monitoring-off',
    on: ['servers'],
    where: [{ field: 'is_monitored', from: true, to: false }],
    target_url: 'https://hooks.example.net/pmc',
  },
});
