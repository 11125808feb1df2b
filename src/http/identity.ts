import type { Context } from 'koa';
import type { ConfigService } from '../application/service.js';
import type { Principal, Refusal } from '../application/tokens.js';
import { ROLES, type Role } from '../domain/tokens/resource.js';
import { RequestError } from './errors.js';

/** What a route asks of its caller: nothing, to be known (whoami), a role, or the right to read secrets. */
export type Access = 'open' | 'identified' | Role | 'secrets';

export const REALM = 'pmacontrol-config';

const REASONS: Record<Refusal | 'missing' | 'scheme' | 'basic', string> = {
  missing: 'this route needs a token: send Authorization: Bearer <token>',
  scheme: 'the Authorization header must be "Bearer <token>"',
  basic: 'the Authorization header must be "Bearer <token>", or Basic with the token as the password',
  malformed: 'the token is malformed: tokens are pmc_ followed by 43 base64url characters',
  unknown: 'the token is unknown',
  expired: 'the token has expired',
  revoked: 'the token was revoked',
};

export class Unauthorized extends RequestError {
  /** `basic`: the route also takes Basic, and says so (a client such as Ansible's uri sends it when asked). */
  constructor(
    readonly reason: keyof typeof REASONS,
    basic = false,
  ) {
    const bearer = reason === 'missing' ? `Bearer realm="${REALM}"` : `Bearer realm="${REALM}", error="invalid_token"`;
    const challenge = basic ? `${bearer}, Basic realm="${REALM}"` : bearer;
    super(401, 'unauthorized', REASONS[reason === 'scheme' && basic ? 'basic' : reason], { challenge });
  }
}

export const forbidden = (detail: string) => new RequestError(403, 'forbidden', detail);

/**
 * Who sent the request: the token's principal, or anonymous; a bad token never falls back to
 * anonymous. `basic`: the route also takes the token as the password of Basic authentication.
 */
export function identify(ctx: Context, service: ConfigService, anonymousRole: Role | 'none', basic = false): Principal {
  return identifyBy(ctx.get('Authorization'), service, anonymousRole, basic);
}

/** Each service's reading of the log's head for an unknown token, shared by the requests that wait for it. */
const following = new WeakMap<ConfigService, Promise<void>>();

/**
 * `identify`, except that a token of the right form the instance does not know makes it read the log
 * to its head once before it answers 401: a token just issued through another instance, or by the
 * CLI, works at once (concurrent requests share that one reading).
 */
export async function identifyFresh(
  ctx: Context,
  service: ConfigService,
  anonymousRole: Role | 'none',
  basic = false,
): Promise<Principal> {
  try {
    return identify(ctx, service, anonymousRole, basic);
  } catch (error) {
    if (!(error instanceof Unauthorized) || error.reason !== 'unknown') throw error;
    let reading = following.get(service);
    if (!reading) {
      reading = service.projector.catchUp().finally(() => following.delete(service));
      following.set(service, reading);
    }
    await reading;
    return identify(ctx, service, anonymousRole, basic);
  }
}

/** The user and password of `Basic base64(user:password)`, or undefined. */
export function basicCredentials(header: string): { user: string; password: string } | undefined {
  const credentials = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  if (!credentials) return undefined;
  const text = Buffer.from(credentials[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? undefined : { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The token of `Basic base64(user:token)`; the user name is not looked at (the token's name is the actor). */
const basicToken = (header: string): string | undefined => basicCredentials(header)?.password;

/** `identify`, from the Authorization header's value ('' when there is none). */
export function identifyBy(
  header: string,
  service: ConfigService,
  anonymousRole: Role | 'none',
  basic = false,
): Principal {
  if (header === '') return { actor: 'anonymous', role: anonymousRole, secrets: false };
  const token = /^Bearer +(\S+)$/i.exec(header)?.[1] ?? (basic ? basicToken(header) : undefined);
  if (token === undefined) throw new Unauthorized('scheme', basic);
  const principal = service.authenticate(token);
  if (typeof principal === 'string') throw new Unauthorized(principal, basic);
  return principal;
}

const rank = (role: Role | 'none') => (role === 'none' ? -1 : ROLES.indexOf(role));

/** Refuses a caller whose role is not enough: 401 for an anonymous caller with no role at all, else 403. */
export function authorize(principal: Principal, access: Access, basic = false): void {
  if (access === 'open' || access === 'identified') return;
  const anonymousWithout = principal.actor === 'anonymous' && principal.role === 'none';
  if (access === 'secrets') {
    if (principal.secrets) return;
    if (anonymousWithout) throw new Unauthorized('missing');
    throw forbidden('reading secrets needs a token issued with "secrets": true');
  }
  if (rank(principal.role) >= rank(access)) return;
  if (anonymousWithout) throw new Unauthorized('missing', basic);
  throw forbidden(`this needs the ${access} role; ${principal.actor} has ${principal.role}`);
}
