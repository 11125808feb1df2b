import type { Context } from 'koa';
import type { Caller } from '../application/group-commit.js';
import type { RecordedResponse } from '../application/requests.js';
import type { ConfigService, Once, OnceOptions } from '../application/service.js';
import type { Principal } from '../application/tokens.js';
import { invalidHeader } from './errors.js';

/** 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Who asks, for the events and the gates: a client of the API is always gated (its role is known); a
 * break-glass token's reason comes from X-Break-Glass-Reason, a change set to stage in from Change-Set.
 */
export function callerOf(ctx: Context): Caller {
  const principal = ctx.state.principal as Principal | undefined;
  const caller: Caller = { actor: ctx.state.actor as string, requestId: ctx.state.requestId as string };
  caller.role = principal?.role ?? 'none';
  const reason = ctx.get('X-Break-Glass-Reason').trim();
  if (principal?.breakGlass && reason !== '') caller.breakGlass = reason.slice(0, 1000);
  const changeSet = ctx.get('Change-Set');
  if (changeSet !== '') {
    if (!/^[1-9][0-9]{0,15}$/.test(changeSet)) throw invalidHeader('Change-Set must be the id of a change set');
    caller.changeSet = Number(changeSet);
  }
  return caller;
}

/** A JSON answer with its headers, as it is sent and, with an Idempotency-Key, kept. */
export const jsonResponse = (status: number, body: string, headers: Record<string, string> = {}): RecordedResponse => ({
  status,
  headers,
  body,
});

function send(ctx: Context, response: RecordedResponse, replayed: boolean): void {
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
  if (!response.headers['Content-Type']) ctx.type = 'application/json';
  ctx.body = response.body;
}

/**
 * Runs a write and sends its answer. With an Idempotency-Key, the answer is kept with the write's
 * events, and a retry with the same key, method, path and body gets it again, byte for byte.
 */
export async function write<T>(
  ctx: Context,
  service: ConfigService,
  raw: string,
  run: { plain: () => Promise<T>; once: (options: OnceOptions<T>) => Promise<Once> },
  respond: (result: T) => RecordedResponse,
  keep?: (result: T) => RecordedResponse,
): Promise<void> {
  const key = ctx.get('Idempotency-Key');
  if (key === '') return send(ctx, respond(await run.plain()), false);
  if (!IDEMPOTENCY_KEY.test(key)) throw invalidHeader('Idempotency-Key must be 1 to 255 visible ASCII characters');
  const idempotency = { key, fingerprint: service.fingerprintOf(ctx.method, ctx.path, raw) };
  const { response, replayed } = await run.once({ idempotency, respond, keep });
  send(ctx, response, replayed);
}
