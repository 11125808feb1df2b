import { createHash } from 'node:crypto';
import { resourceOfEvent } from '../domain/evolve.js';
import { collectionOf, isCollectionName } from '../domain/resources.js';
import { CONFIG_STREAM, type LoggedEvent } from '../domain/shared/types.js';
import { type Hash, leafHash } from '../engine/merkle.js';

/**
 * The leaf of the verifiable log for one event: the event as stored — its position, type, stream
 * and revision, data and metadata — with every sealed secret value replaced by the lowercase hex
 * SHA-256 of the sealed value, as JSON without space, the members of data and metadata in the order
 * they were written (every store keeps an event's JSON text as it was appended, so the same event
 * gives the same bytes whatever store kept it). Pure: `verify` makes them from the store, the
 * service as it folds, both alike.
 */

const digestOf = (sealed: string) => createHash('sha256').update(sealed).digest('hex');

/** The secret fields of the entry an event is about: its own resource, or the one its data names (a re-seal). */
function secretFieldsOf(event: LoggedEvent): readonly string[] {
  const named = event.data.resource;
  const resource =
    resourceOfEvent(event.type) ?? (typeof named === 'string' && isCollectionName(named) ? named : undefined);
  return resource ? collectionOf(resource).secretFields : [];
}

/** `values` with each secret field holding a string replaced by its digest (a copy only when one is there). */
function hashed(values: Record<string, unknown>, secrets: readonly string[]): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const field of secrets) {
    const value = values[field];
    if (typeof value !== 'string') continue;
    copy ??= { ...values };
    copy[field] = digestOf(value);
  }
  return copy ?? values;
}

/** The event's data with its sealed values digested, also inside `changes` and `values`. */
function leafData(event: LoggedEvent): Record<string, unknown> {
  const secrets = secretFieldsOf(event);
  if (secrets.length === 0) return event.data;
  const data = hashed(event.data, secrets);
  const copy = { ...data };
  for (const nested of ['changes', 'values']) {
    const inner = data[nested];
    if (inner && typeof inner === 'object' && !Array.isArray(inner))
      copy[nested] = hashed(inner as Record<string, unknown>, secrets);
  }
  return copy;
}

/** The metadata with the sealed answer an Idempotency-Key keeps digested. */
function leafMetadata(event: LoggedEvent): Record<string, unknown> {
  const { idempotency } = event.metadata;
  if (!idempotency) return event.metadata as unknown as Record<string, unknown>;
  return { ...event.metadata, idempotency: { ...idempotency, response: digestOf(idempotency.response) } };
}

/**
 * The leaf of an event as text, its bytes this text in UTF-8. `position`: its place in the log as the
 * store orders it, which is its revision + 1 in a log as it was written (`verify` gives the place it
 * reads it at, so that an event moved is found).
 */
export function leafText(event: LoggedEvent, position = event.revision + 1): string {
  return JSON.stringify({
    position,
    type: event.type,
    stream: CONFIG_STREAM,
    revision: event.revision,
    data: leafData(event),
    metadata: leafMetadata(event),
  });
}

/** The leaf bytes of an event, as `GET /fr/api/log/leaves/{p}` gives them. */
export const leafBytes = (event: LoggedEvent): Buffer => Buffer.from(leafText(event), 'utf8');

/** The leaf hash of an event (RFC 9162: SHA-256 of 0x00 and the leaf bytes): what the read models' tree grows by. */
export const leafOf = (event: LoggedEvent): Hash => leafHash(leafText(event));
