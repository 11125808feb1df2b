import type { Readable } from 'node:stream';
import type { ChangeItem } from '../../projections/changes.js';
import { pacedBody } from './paced.js';

export const CSV_HEADER = 'position,at,actor,request_id,type,resource,id,field,before,after';

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** A value as CSV shows it: a string as it is, null as nothing, anything else as JSON. */
const csvValue = (value: unknown) => (value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/**
 * One row per diff member, the entries changed in passing included (with their own resource and id);
 * an event that changed no field (a revealed secret) still gets one row, with the last three empty.
 */
export function csvRows(item: ChangeItem): string {
  const head = [item.position, item.at, item.actor, item.request_id, item.type];
  const entries = [{ resource: item.resource, id: item.id, diff: item.diff }, ...item.effects];
  const rows: unknown[][] = [];
  for (const entry of entries) {
    for (const member of entry.diff) {
      rows.push([...head, entry.resource, entry.id, member.field, csvValue(member.before), csvValue(member.after)]);
    }
  }
  if (rows.length === 0) rows.push([...head, item.resource, item.id, '', '', '']);
  return rows
    .map((row) => `${row.map((value) => csvField(value === null ? '' : String(value))).join(',')}\r\n`)
    .join('');
}

/** A text body made as the client reads it, from items read lazily, in pieces of about 64 KiB. */
export function streamed<T>(items: AsyncIterable<T>, line: (item: T) => string, header = ''): Readable {
  async function* pieces() {
    if (header) yield header;
    let chunk = '';
    for await (const item of items) {
      chunk += line(item);
      if (chunk.length >= 64 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  return pacedBody(pieces());
}

/** Takes at most `limit` items, lazily. */
export async function* take<T>(items: AsyncIterable<T>, limit: number | undefined): AsyncIterable<T> {
  if (limit === undefined) return yield* items;
  let count = 0;
  for await (const item of items) {
    if (count++ >= limit) return;
    yield item;
  }
}
