import { EVENT_SCHEMA, type LoggedEvent } from './shared/types.js';

/**
 * Brings an event written by an older version to the shape the fold reads (`EVENT_SCHEMA`). Events
 * in the log are never rewritten: they are upcast each time they are read.
 *
 * How to evolve events (also in ARCHITECTURE.md):
 * - A new event type needs a new entry in the fold's table; old logs simply do not contain it.
 * - A new field in an event's data needs a default here (DEFAULTS) for the events written before it.
 * - A change of meaning raises EVENT_SCHEMA and adds a step here from the version before.
 */
type Step = (event: LoggedEvent) => LoggedEvent;

/** Schema 1 → 2: a hard delete's effects on other entries were recorded as separate events. */
const CASCADE_RECORDED = new Set(['TagDeleted', 'ClientDeleted']);

const STEPS: Record<number, Step> = {
  1: (event) => (CASCADE_RECORDED.has(event.type) ? { ...event, data: { ...event.data, cascade: 'recorded' } } : event),
};

/** An event whose data (or whose `values`, for a revert) lacks `fields`: given them, at these values. */
const withFields =
  (fields: Record<string, unknown>, under?: 'values'): Step =>
  (event) => {
    const held = (under ? event.data[under] : event.data) as Record<string, unknown> | undefined;
    if (!held || Object.keys(fields).every((field) => field in held)) return event;
    const filled = { ...held, ...Object.fromEntries(Object.entries(fields).filter(([field]) => !(field in held))) };
    return { ...event, data: under ? { ...event.data, [under]: filled } : filled };
  };

/**
 * Fields added to an event type's data, and their value in the events written before them: tokens
 * are issued and revoked through the generic creation and update, whose data holds every field
 * (`revoked_at`, `break_glass`) and the changes (`changes.revoked_at`, the time of the revocation); clients gained
 * `is_display` (shown in PmaControl's lists: true), servers `ssh_keys` (none).
 */
const DEFAULTS: Record<string, Step> = {
  ClientCreated: withFields({ is_display: true }),
  ClientReverted: withFields({ is_display: true }, 'values'),
  ServerCreated: withFields({ ssh_keys: [] }),
  ServerReverted: withFields({ ssh_keys: [] }, 'values'),
  TokenIssued: (event) => {
    const data = 'revoked_at' in event.data ? event.data : { ...event.data, revoked_at: null };
    return 'break_glass' in data ? { ...event, data } : { ...event, data: { ...data, break_glass: false } };
  },
  TokenReverted: withFields({ break_glass: false }, 'values'),
  TokenRevoked: (event) =>
    'changes' in event.data ? event : { ...event, data: { ...event.data, changes: { revoked_at: event.metadata.at } } },
};

export function upcast(event: LoggedEvent): LoggedEvent {
  let current = event;
  for (let version = event.metadata.schema ?? 1; version < EVENT_SCHEMA; version++) current = STEPS[version](current);
  const fill = DEFAULTS[current.type];
  return fill ? fill(current) : current;
}
