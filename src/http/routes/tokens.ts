import type { Context } from 'koa';
import type { ConfigService } from '../../application/service.js';
import type { Principal } from '../../application/tokens.js';
import type { ResourceName } from '../../domain/resources.js';
import type { EntryRecord } from '../../engine/table.js';
import { parseTokenRequest } from '../../schemas/tokens.js';
import { readJson } from '../body.js';
import { problemType } from '../errors.js';
import { forbidden } from '../identity.js';
import { parseId, refuseQuery } from '../request.js';
import { callerOf, jsonResponse, write } from '../writes.js';
import { TOKENS_PATH } from './descriptors.js';

/** A token as the API shows it: never the token, never its digest. */
export const presentToken = (token: EntryRecord) => ({
  id: token.id,
  name: token.name,
  role: token.role,
  secrets: token.secrets,
  break_glass: token.break_glass === true,
  created_at: token.created_at,
  expires_at: token.expires_at,
  revoked_at: token.revoked_at,
});

/** `GET …/{resource}/{id}/secret`: every secret field of the entry, each read recorded in the log, then answered. */
export async function revealSecret(ctx: Context, service: ConfigService, resource: ResourceName) {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  ctx.body = await service.write.revealSecrets(resource, id, callerOf(ctx));
}

export function whoami(ctx: Context): void {
  refuseQuery(ctx);
  const { actor, role, secrets } = ctx.state.principal as Principal;
  ctx.body = { actor, role, secrets };
}

export function listTokens(ctx: Context, service: ConfigService): void {
  refuseQuery(ctx);
  ctx.body = { items: service.state.collections.tokens.inOrder().map(presentToken) };
}

/** 201 with the token, shown this once, and the token's entry. */
export async function issueToken(ctx: Context, service: ConfigService): Promise<void> {
  refuseQuery(ctx);
  const { value, raw } = await readJson(ctx);
  const request = parseTokenRequest(value, service.now());
  // A right is given only by one who holds it: an admin without it cannot mint a token that has it.
  if (request.secrets && !(ctx.state.principal as Principal).secrets) {
    throw forbidden('only a caller whose token may read secrets can issue one that may (the CLI issues the first)');
  }
  const caller = callerOf(ctx);
  await write(
    ctx,
    service,
    raw,
    {
      plain: () => service.write.issueToken(request, caller),
      once: (options) => service.write.issueToken(request, caller, options),
    },
    ({ token, entry }) =>
      jsonResponse(201, JSON.stringify({ token, item: presentToken(entry) }), {
        Location: `${TOKENS_PATH}/${entry.id}`,
      }),
    ({ entry }) => alreadyIssued(entry),
  );
}

/**
 * What a retry of a token's issue with the same Idempotency-Key gets: a token is shown once and
 * never kept, so the retry is told it was issued, and which one, without it.
 */
function alreadyIssued(entry: EntryRecord) {
  const detail =
    `token ${entry.id} (${entry.name}) was issued by the first request with this Idempotency-Key; a token ` +
    'is shown only once: revoke it and issue another if its value was lost';
  const body = {
    type: problemType('conflict'),
    title: 'Conflict',
    status: 409,
    detail,
    code: 'conflict',
    error: detail,
    conflict: { resource: 'tokens', id: entry.id, fields: ['Idempotency-Key'] },
  };
  return jsonResponse(409, JSON.stringify(body), { 'Content-Type': 'application/problem+json' });
}

/** The token answers 401 from then on, here and on every instance that has followed the log. */
export async function revokeToken(ctx: Context, service: ConfigService): Promise<void> {
  refuseQuery(ctx);
  const id = parseId(ctx.params.id);
  const caller = callerOf(ctx);
  await write(
    ctx,
    service,
    '',
    {
      plain: () => service.write.revokeToken(id, caller),
      once: (options) => service.write.revokeToken(id, caller, options),
    },
    () => jsonResponse(200, JSON.stringify({ id, revoked: true })),
  );
}
