import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { invalidJson, payloadTooLarge, unsupportedMediaType } from './errors.js';

export const BODY_LIMIT = 1024 * 1024;

/**
 * UTF-8 as raw-body's `encoding` decoded it (a leading BOM dropped, a byte that is not UTF-8
 * replaced by U+FFFD), without it: raw-body decodes through iconv-lite, which loads its tables of
 * every encoding on the first body it reads (bench/http.ts, first requests after a start).
 */
const UTF8 = new TextDecoder('utf-8');

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
  let text: string;
  try {
    text = UTF8.decode(await getRawBody(ctx.req, { limit }));
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(limit);
    throw invalidJson('the request body could not be read');
  }
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
