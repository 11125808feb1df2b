import type { ResourceName } from '../domain/resources.js';
import type { EntryRecord } from '../engine/table.js';
import { entryJson } from './list-body.js';
import { entriesPath } from './routes/descriptors.js';

/**
 * The plain read of one entry (`GET /fr/api/config/{resource}/{id}`, no query, no condition): the
 * one place that says what its answer is. The Koa route and the fast path (fast-read.ts) both send
 * what `entryRead` gives, after the headers every answer starts with (`edgeHeaders`).
 */

export const etag = (entry: EntryRecord) => `"${entry.version}"`;

/** `{...head, "item": <item>, ...tail}`, the item's JSON given as text. */
export function aroundItem(head: object, item: string, tail: object = {}): string {
  const before = Object.keys(head).length ? `${JSON.stringify(head).slice(1, -1)},` : '';
  const after = Object.keys(tail).length ? `,${JSON.stringify(tail).slice(1, -1)}` : '';
  return `{${before}"item":${item}${after}}`;
}

/** A JSON body: fixed members, the entry's cached JSON, then members after it. */
export function entryBody(resource: ResourceName, head: object, entry: EntryRecord, tail: object = {}): string {
  return aroundItem(head, entryJson(resource, entry), tail);
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The headers of a plain read after the edge ones, in order, and its body (status 200). */
export function entryRead(resource: ResourceName, entry: EntryRecord): { headers: [string, string][]; body: string } {
  return {
    headers: [
      ['ETag', etag(entry)],
      ['Content-Type', JSON_TYPE],
    ],
    body: entryBody(resource, {}, entry),
  };
}

/** The route template a read of `resource` is logged and measured under. */
export const entryRoute = (resource: ResourceName): string => `${entriesPath(resource)}/:id`;
