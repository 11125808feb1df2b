import type { Readable } from 'node:stream';
import type { ChangeItem } from '../../projections/changes.js';
import { pacedBody } from './paced.js';

export const CSV_HEADER = 'position,at,actor,request_id,type,resource,id,field,before,after';

/**
 * A text that a spreadsheet would run as a formula (OWASP's CSV injection: a start of `=`, `+`, `-`,
 * `@`, a tab or a carriage return) gets a leading `'`, which spreadsheets show as text.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field (RFC 4180: quoted, its quotes doubled, when it holds a comma, a quote or a line
 * break): null (no value) as an empty field, unquoted; an empty text as `""`, quoted, so that the two
 * are told apart; a text that could start a formula neutralised; numbers, booleans and lists as JSON.
 */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value === '') return '""';
  const text = typeof value === 'string' ? (FORMULA_START.test(value) ? `'${value}` : value) : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

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
      rows.push([...head, entry.resource, entry.id, member.field, member.before, member.after]);
    }
  }
  if (rows.length === 0) rows.push([...head, item.resource, item.id, null, null, null]);
  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
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
