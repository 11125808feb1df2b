import type { Context } from 'koa';
import {
  invalidQuery,
  parseId,
  RequestError,
  type RouteModule,
  refuseQuery,
  singleParameters,
} from '../http/route-module.js';
import { logCheckpoint, logConsistency, logInclusion, logLeaf, logPublicKey } from './operations.js';
import { OutsideTheLog, type VerifiableLog } from './verifiable-log.js';

/**
 * The log anyone can verify: its signed checkpoint, its public key, its leaves and the proofs
 * (RFC 9162, C2SP tlog-checkpoint and signed-note). Routes hold no rule: parse, ask, answer.
 */

const TEXT = 'text/plain; charset=utf-8';

function logOf(log: VerifiableLog | undefined): VerifiableLog {
  if (!log) throw new RequestError(503, 'unavailable', 'this instance serves no verifiable log');
  return log;
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

export function checkpoint(ctx: Context, log: VerifiableLog | undefined): void {
  refuseQuery(ctx);
  ctx.type = TEXT;
  ctx.body = logOf(log).checkpoint();
}

export function publicKey(ctx: Context, log: VerifiableLog | undefined): void {
  refuseQuery(ctx);
  ctx.type = TEXT;
  ctx.body = `${logOf(log).publicKey()}\n`;
}

export async function leaf(ctx: Context, log: VerifiableLog | undefined): Promise<void> {
  refuseQuery(ctx);
  const position = parseId(ctx.params.position);
  ctx.type = 'application/json';
  ctx.body = await answering(() => logOf(log).leaf(position), 404);
}

export async function inclusionProof(ctx: Context, log: VerifiableLog | undefined): Promise<void> {
  const params = singleParameters(ctx, ['position', 'size']);
  const position = count('position', params.position);
  if (position === undefined) throw invalidQuery('position is required');
  const size = count('size', params.size);
  ctx.body = await answering(() => logOf(log).inclusion(position, size), 400);
}

export async function consistencyProof(ctx: Context, log: VerifiableLog | undefined): Promise<void> {
  const params = singleParameters(ctx, ['from', 'to']);
  const [from, to] = [count('from', params.from), count('to', params.to)];
  if (from === undefined || to === undefined) throw invalidQuery('from and to are required');
  ctx.body = await answering(() => logOf(log).consistency(from, to), 400);
}

const API = '/fr/api/log';

/** The verifiable log's routes; `log`: the instance's (absent where none is served, as in `openapi`). */
export function logRoutes(log?: VerifiableLog): RouteModule {
  return {
    tags: [
      {
        name: 'log',
        description: 'The log anyone can verify: signed checkpoints, leaves, inclusion and consistency proofs',
      },
    ],
    routes: [
      { kind: 'checkpoint', method: 'GET', path: `${API}/checkpoint`, access: 'reader' },
      { kind: 'publicKey', method: 'GET', path: `${API}/public-key`, access: 'open' },
      { kind: 'leaf', method: 'GET', path: `${API}/leaves/{position}`, access: 'reader' },
      { kind: 'inclusion', method: 'GET', path: `${API}/proof/inclusion`, access: 'reader' },
      { kind: 'consistency', method: 'GET', path: `${API}/proof/consistency`, access: 'reader' },
    ],
    operations: {
      checkpoint: logCheckpoint,
      publicKey: logPublicKey,
      leaf: logLeaf,
      inclusion: logInclusion,
      consistency: logConsistency,
    },
    handlers: () => ({
      checkpoint: (ctx) => checkpoint(ctx, log),
      publicKey: (ctx) => publicKey(ctx, log),
      leaf: (ctx) => leaf(ctx, log),
      inclusion: (ctx) => inclusionProof(ctx, log),
      consistency: (ctx) => consistencyProof(ctx, log),
    }),
  };
}
