import { REDACTED, SECRET_FIELDS } from '../src/domain/shared/secrets.js';
import type { EventMetadata, Resource } from '../src/domain/shared/types.js';

/** One item of `GET /{resource}/{id}/history`. */
export interface HistoryItem {
  position: number;
  revision: number;
  type: string;
  at: string;
  actor: string;
  request_id: string;
  data: Record<string, unknown>;
}

export interface HistoryRow extends HistoryItem {
  resource: Resource;
  entry_id: number;
}

/** Sealed secrets stay out of history too: a secret that was set shows as `[redacted]`. */
export function redact(data: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...data };
  for (const field of SECRET_FIELDS) if (field in copy) copy[field] = REDACTED;
  if (copy.changes && typeof copy.changes === 'object') copy.changes = redact(copy.changes as Record<string, unknown>);
  return copy;
}

export function historyRow(
  resource: Resource,
  revision: number,
  event: { position: number; type: string; data: unknown; metadata: EventMetadata },
): HistoryRow {
  const data = event.data as Record<string, unknown>;
  return {
    resource,
    entry_id: data.id as number,
    position: event.position,
    revision,
    type: event.type,
    at: event.metadata.at,
    actor: event.metadata.actor,
    request_id: event.metadata.request_id,
    data: redact(data),
  };
}
