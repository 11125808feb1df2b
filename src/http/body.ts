import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { invalidJson, payloadTooLarge, unsupportedMediaType } from './errors.js';

export const BODY_LIMIT = 1024 * 1024;

/**
 * UTF-8, strictly: a byte sequence that is not UTF-8 refuses the body (400) rather than becoming
 * U+FFFD in a name or a password; a leading BOM is dropped. Decoded here rather than by raw-body's
 * `encoding`, which goes through iconv-lite and loads its tables of every encoding on the first body
 * it reads (bench/http.ts, first requests after a start).
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body's text, or a 400 when it is not UTF-8. */
function decoded(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw invalidJson('the body is not valid UTF-8');
  }
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/** A body must be sent as JSON in UTF-8 (415 otherwise), within `limit` bytes if it says its length (413). */
export function assertJsonBody(ctx: Context, limit: number): void {
  const contentType = ctx.get('Content-Type');
  const [mediaType, ...parameters] = contentType.split(';').map((p) => p.trim());
  if (!JSON_TYPE.test(mediaType ?? '')) throw unsupportedMediaType(contentType);
  const charset = parameters
    .find((p) => /^charset=/i.test(p))
    ?.slice(8)
    .replace(/"/g, '')
    .toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') throw unsupportedMediaType(contentType);
  const declared = Number(ctx.get('Content-Length') || NaN);
  if (declared > limit) throw payloadTooLarge(limit);
}

/** The JSON object and its text as received (an Idempotency-Key's fingerprint is taken over the text). */
export async function readJson(
  ctx: Context,
  limit = BODY_LIMIT,
): Promise<{ value: Record<string, unknown>; raw: string }> {
  assertJsonBody(ctx, limit);
  let bytes: Buffer;
  try {
    bytes = await getRawBody(ctx.req, { limit });
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(limit);
    throw invalidJson('the request body could not be read');
  }
  return parsedObject(decoded(bytes));
}

/** The JSON object a body's text holds, or a 400 saying why not. */
function parsedObject(text: string): { value: Record<string, unknown>; raw: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidJson(text.trim() === '' ? 'the body is empty; send a JSON object' : 'the body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidJson('the body must be a JSON object');
  return { value: value as Record<string, unknown>, raw: text };
}

/**
 * Counts a JSON text's values as its bytes arrive, without parsing it: containers and the commas
 * between values (strings and their escapes skipped; UTF-8 never puts a quote or a backslash inside a
 * multi-byte character), and how deep they nest.
 */
class ValueCounter {
  values = 0;
  depth = 0;
  deepest = 0;
  private inString = false;
  private escaped = false;

  feed(chunk: Uint8Array): void {
    for (const byte of chunk) {
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === 0x5c) this.escaped = true;
        else if (byte === 0x22) this.inString = false;
      } else if (byte === 0x22) this.inString = true;
      else if (byte === 0x7b || byte === 0x5b) {
        this.values++;
        this.deepest = Math.max(this.deepest, ++this.depth);
      } else if (byte === 0x7d || byte === 0x5d) this.depth--;
      else if (byte === 0x2c) this.values++;
    }
  }
}

/** How much a body may hold: bytes, JSON values (containers and list or object members) and nesting. */
export interface BodyBounds {
  bytes: number;
  values: number;
  depth: number;
}

/**
 * `readJson` for a large body (PmaControl's push): read as a stream, its values counted as they
 * arrive, and refused (413) as soon as it holds more than `bounds` allows — millions of tiny values
 * cost the bytes read up to the bound, never a parse of them all. The connection is then closed
 * rather than drained.
 */
export async function readJsonBounded(
  ctx: Context,
  bounds: BodyBounds,
): Promise<{ value: Record<string, unknown>; raw: string }> {
  assertJsonBody(ctx, bounds.bytes);
  const chunks = await boundedChunks(ctx, bounds);
  return parsedObject(decoded(Buffer.concat(chunks)));
}

/**
 * The body's chunks, each counted as it arrives; past a bound, reading stops there (the rest is not
 * read, and the connection is closed once the refusal is answered).
 */
function boundedChunks(ctx: Context, bounds: BodyBounds): Promise<Buffer[]> {
  const request = ctx.req;
  const counter = new ValueCounter();
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve, reject) => {
    const stop = (error: Error) => {
      request.off('data', onData).off('end', onEnd).off('error', onError);
      request.pause();
      ctx.set('Connection', 'close');
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > bounds.bytes) return stop(payloadTooLarge(bounds.bytes));
      counter.feed(chunk);
      if (counter.values > bounds.values || counter.deepest > bounds.depth) {
        const detail =
          `the body holds more than ${bounds.values} JSON values or nests deeper than ${bounds.depth}: ` +
          'send it in parts';
        return stop(payloadTooLarge(bounds.bytes, detail));
      }
      chunks.push(chunk);
    };
    const onEnd = () => resolve(chunks);
    const onError = () => stop(invalidJson('the request body could not be read'));
    request.on('data', onData).once('end', onEnd).once('error', onError);
  });
}
