import type { Context } from 'koa';
import type { ConfigService } from '../../application/service.js';
import { OutsideTheLog, type VerifiableLog } from '../../application/verifiable-log.js';
import { invalidQuery, RequestError } from '../errors.js';
import { parseId, refuseQuery, singleParameters } from '../request.js';

/**
 * The log anyone can verify: its signed checkpoint, its public key, its leaves and the proofs
 * (RFC 9162, C2SP tlog-checkpoint and signed-note). Routes hold no rule: parse, ask, answer.
 */

const TEXT = 'text/plain; charset=utf-8';

function logOf(service: ConfigService): VerifiableLog {
  if (!service.log) throw new RequestError(503, 'unavailable', 'this instance serves no verifiable log');
  return service.log;
}

/** A size or a position as the proofs take them: 1 … 2^53 − 1, decimal. */
function count(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  try {
    return parseId(raw);
  } catch {
    throw invalidQuery(`${name} must be an integer from 1`);
  }
}

/** Past the end of the log, or before its start: 404 for a leaf, 400 for a proof's sizes. */
async function answering<T>(ask: () => Promise<T>, status: 400 | 404): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (!(error instanceof OutsideTheLog)) throw error;
    throw status === 404 ? new RequestError(404, 'not_found', error.message) : invalidQuery(error.message);
  }
}

export function checkpoint(ctx: Context, service: ConfigService): void {
  refuseQuery(ctx);
  ctx.type = TEXT;
  ctx.body = logOf(service).checkpoint();
}

export function publicKey(ctx: Context, service: ConfigService): void {
  refuseQuery(ctx);
  ctx.type = TEXT;
  ctx.body = `${logOf(service).publicKey()}\n`;
}

export async function leaf(ctx: Context, service: ConfigService): Promise<void> {
  refuseQuery(ctx);
  const position = parseId(ctx.params.position);
  ctx.type = 'application/json';
  ctx.body = await answering(() => logOf(service).leaf(position), 404);
}

export async function inclusionProof(ctx: Context, service: ConfigService): Promise<void> {
  const params = singleParameters(ctx, ['position', 'size']);
  const position = count('position', params.position);
  if (position === undefined) throw invalidQuery('position is required');
  const size = count('size', params.size);
  ctx.body = await answering(() => logOf(service).inclusion(position, size), 400);
}

export async function consistencyProof(ctx: Context, service: ConfigService): Promise<void> {
  const params = singleParameters(ctx, ['from', 'to']);
  const [from, to] = [count('from', params.from), count('to', params.to)];
  if (from === undefined || to === undefined) throw invalidQuery('from and to are required');
  ctx.body = await answering(() => logOf(service).consistency(from, to), 400);
}
