import { createHash, randomBytes } from 'node:crypto';
import type { Sealed } from '../domain/shared/fields.js';
import type { ConfigState } from '../domain/state.js';
import type { Role } from '../domain/tokens/resource.js';
import type { EntryRecord } from '../engine/table.js';
import type { Projected } from './projector.js';
import type { SecretBox } from './secrets.js';

/** Who is asking: a token's name and role, or `anonymous` with the anonymous role. */
export interface Principal {
  actor: string;
  role: Role | 'none';
  secrets: boolean;
  /** A break-glass token: may pass an approval policy alone, with a reason. */
  breakGlass?: boolean;
}

/** `pmc_` followed by 43 base64url characters: 32 random bytes. */
export const TOKEN_FORMAT = /^pmc_[A-Za-z0-9_-]{43}$/;

export const generateToken = (): string => `pmc_${randomBytes(32).toString('base64url')}`;

/** What the log keeps of a token, sealed: its SHA-256 (a 256-bit random token cannot be guessed from it). */
export const tokenDigest = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Why a presented token is refused (401), in words for the client. */
export type Refusal = 'malformed' | 'unknown' | 'expired' | 'revoked';

/**
 * The live tokens, by digest: a request costs one hash and one map look-up, no store read. Kept up
 * to date from the projector, so a token issued or revoked through any instance counts here as soon
 * as this instance has followed the log.
 */
export class TokenTable {
  private readonly byDigest = new Map<string, number>();

  constructor(
    private readonly state: () => ConfigState,
    private readonly secrets: SecretBox,
  ) {}

  /** Indexes every token the state holds (at start, once the key is known). */
  load(): void {
    this.byDigest.clear();
    for (const token of this.state().collections.tokens.values()) this.index(token);
  }

  /** For the projector: indexes the tokens a batch issued. */
  readonly update = (batch: Projected[]): void => {
    for (const { effects } of batch) {
      for (const effect of effects)
        if (effect.resource === 'tokens' && effect.after && !effect.before) this.index(effect.after);
    }
  };

  private index(token: EntryRecord): void {
    const digest = this.secrets.tryOpen(token.digest as Sealed);
    if (digest !== undefined) this.byDigest.set(digest, token.id);
  }

  /** The principal a token stands for, or why it is refused. */
  authenticate(token: string, now: Date): Principal | Refusal {
    if (!TOKEN_FORMAT.test(token)) return 'malformed';
    const id = this.byDigest.get(tokenDigest(token));
    const entry = id === undefined ? undefined : this.state().collections.tokens.get(id);
    if (!entry) return 'unknown';
    if (entry.revoked_at !== null) return 'revoked';
    if (entry.expires_at !== null && Date.parse(entry.expires_at as string) <= now.getTime()) return 'expired';
    const principal: Principal = {
      actor: entry.name as string,
      role: entry.role as Role,
      secrets: entry.secrets === true,
    };
    if (entry.break_glass === true) principal.breakGlass = true;
    return principal;
  }
}

/** `30d`, `12h`, `90m`, `3600s`: a duration for `--expires-in`, in milliseconds. */
export function parseDuration(text: string): number {
  const match = /^([1-9][0-9]{0,6})([smhd])$/.exec(text);
  if (!match) throw new Error(`"${text}" is not a duration such as 30d, 12h, 90m or 3600s`);
  return Number(match[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
}

export interface NewToken {
  name: string;
  role: Role;
  secrets: boolean;
  /** Issued from the CLI only: may pass an approval policy alone. */
  breakGlass?: boolean;
  /** ISO 8601 UTC, or null for never. */
  expiresAt: string | null;
}

export interface IssuedToken {
  /** Shown once: the log keeps only its sealed digest. */
  token: string;
  entry: EntryRecord;
}
