import type { Context } from 'koa';
import type { ConfigService } from '../application/service.js';
import type { Principal, Refusal } from '../application/tokens.js';
import { ROLES, type Role } from '../domain/tokens/resource.js';
import { RequestError } from './errors.js';

/** What a route asks of its caller: nothing, to be known (whoami), a role, or the right to read secrets. */
export type Access = 'open' | 'identified' | Role | 'secrets';

export const REALM = 'pmacontrol-config';

const REASONS: Record<Refusal | 'missing' | 'scheme', string> = {
  missing: 'this route needs a token: send Authorization: Bearer <token>',
  scheme: 'the Authorization header must be "Bearer <token>"',
  malformed: 'the token is malformed: tokens are pmc_ followed by 43 base64url characters',
  unknown: 'the token is unknown',
  expired: 'the token has expired',
  revoked: 'the token was revoked',
};

export class Unauthorized extends RequestError {
  constructor(reason: keyof typeof REASONS) {
    const challenge =
      reason === 'missing' ? `Bearer realm="${REALM}"` : `Bearer realm="${REALM}", error="invalid_token"`;
    super(401, 'unauthorized', REASONS[reason], { challenge });
  }
}

export const forbidden = (detail: string) => new RequestError(403, 'forbidden', detail);

/** Who sent the request: the token's principal, or anonymous; a bad token never falls back to anonymous. */
export function identify(ctx: Context, service: ConfigService, anonymousRole: Role | 'none'): Principal {
  return identifyBy(ctx.get('Authorization'), service, anonymousRole);
}

/** `identify`, from the Authorization header's value ('' when there is none). */
export function identifyBy(header: string, service: ConfigService, anonymousRole: Role | 'none'): Principal {
  if (header === '') return { actor: 'anonymous', role: anonymousRole, secrets: false };
  const bearer = /^Bearer +(\S+)$/i.exec(header);
  if (!bearer) throw new Unauthorized('scheme');
  const principal = service.authenticate(bearer[1]);
  if (typeof principal === 'string') throw new Unauthorized(principal);
  return principal;
}

const rank = (role: Role | 'none') => (role === 'none' ? -1 : ROLES.indexOf(role));

/** Refuses a caller whose role is not enough: 401 for an anonymous caller with no role at all, else 403. */
export function authorize(principal: Principal, access: Access): void {
  if (access === 'open' || access === 'identified') return;
  const anonymousWithout = principal.actor === 'anonymous' && principal.role === 'none';
  if (access === 'secrets') {
    if (principal.secrets) return;
    if (anonymousWithout) throw new Unauthorized('missing');
    throw forbidden('reading secrets needs a token issued with "secrets": true');
  }
  if (rank(principal.role) >= rank(access)) return;
  if (anonymousWithout) throw new Unauthorized('missing');
  throw forbidden(`this needs the ${access} role; ${principal.actor} has ${principal.role}`);
}
