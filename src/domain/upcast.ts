import { EVENT_SCHEMA, type LoggedEvent } from './shared/types.js';

/**
 * Brings an event written by an older version to the shape the fold reads (`EVENT_SCHEMA`). Events
 * in the log are never rewritten: they are upcast each time they are read.
 *
 * How to evolve events (also in ARCHITECTURE.md):
 * - A new event type needs a new entry in the fold's table; old logs simply do not contain it.
 * - A new field in an event's data needs a default here for the events written before it.
 * - A change of meaning raises EVENT_SCHEMA and adds a step here from the version before.
 */
type Step = (event: LoggedEvent) => LoggedEvent;

/** Schema 1 → 2: a hard delete's effects on other entries were recorded as separate events. */
const CASCADE_RECORDED = new Set(['TagDeleted', 'ClientDeleted']);

const STEPS: Record<number, Step> = {
  1: (event) => (CASCADE_RECORDED.has(event.type) ? { ...event, data: { ...event.data, cascade: 'recorded' } } : event),
};

export function upcast(event: LoggedEvent): LoggedEvent {
  let current = event;
  for (let version = event.metadata.schema ?? 1; version < EVENT_SCHEMA; version++) current = STEPS[version](current);
  return current;
}
