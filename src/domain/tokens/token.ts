import { entryOf, stamped } from '../../engine/entries.js';
import { allocateId, checkUnique } from '../guards.js';
import { defineResource } from '../shared/declaration.js';
import { type Apply, change, existing, FoldError, idOf } from '../shared/effects.js';
import { Deleted, fieldError, NotFound } from '../shared/errors.js';
import { boolean, oneOf, type Sealed, secret, text } from '../shared/fields.js';
import type { DomainEvent } from '../shared/types.js';
import type { ConfigState } from '../state.js';

/** What a token may do; each role may do what the ones before it may. */
export const ROLES = ['reader', 'writer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * A bearer token: its name is the actor of every event its requests cause. The token itself is
 * shown once; the log keeps only a sealed SHA-256 digest of it (never the token, never a plain hash).
 */
export const tokens = defineResource({
  name: 'tokens',
  title: 'Token',
  label: 'token',
  plural: 'Tokens',
  category: 'token',
  description: 'Bearer tokens: who may do what. The token is shown once, when issued.',
  fields: {
    name: text(1, 64, {
      required: true,
      pattern: '^[A-Za-z0-9_.@-]+$',
      description: 'the actor recorded on every event its requests cause; unique among live tokens',
    }),
    role: oneOf(ROLES, { required: true, description: 'reader, writer (+ writes) or admin (+ tokens, import)' }),
    secrets: boolean({ default: false, description: "may read the servers' passwords and the SSH private keys" }),
    expires_at: text(0, 40, { description: 'when it stops working (ISO 8601 UTC); null: never' }),
    revoked_at: text(0, 40, { description: 'when it was revoked; null: live' }),
    digest: secret(64, 1024, { description: 'the sealed SHA-256 of the token' }),
  },
  unique: [
    {
      fields: ['name'],
      among: (token) => token.revoked_at === null,
      describe: (token) => `token name "${token.name}" (among live tokens)`,
    },
  ],
  deletion: 'hard',
  example: { name: 'ansible', role: 'writer' },
});

/**
 * Actors the service names itself: a token with one of these names would pass for the service in
 * the change log. (`cli:<user>`, the actor of the token command, cannot be a token's name: no colon.)
 */
export const RESERVED_ACTORS = ['anonymous', 'system'];

export type TokenCommand =
  | {
      kind: 'issueToken';
      name: string;
      role: Role;
      secrets: boolean;
      /** ISO 8601 UTC, or null for never. */
      expiresAt: string | null;
      digest: Sealed;
    }
  | { kind: 'revokeToken'; id: number };

/** Issues a token (a name unique among live ones), or revokes one (again: nothing to do). */
export function decideToken(command: TokenCommand, state: ConfigState): DomainEvent[] {
  const col = state.collections.tokens;
  if (command.kind === 'issueToken') {
    const id = allocateId(col);
    const { name, role, secrets, expiresAt, digest } = command;
    if (RESERVED_ACTORS.includes(name.toLowerCase()))
      throw fieldError('name', 'reserved', `"${name}" is what the change log calls the service itself`);
    checkUnique(col, { name, revoked_at: null }, id, new Set(['name']));
    return [{ type: 'TokenIssued', data: { id, name, role, secrets, expires_at: expiresAt, digest } }];
  }
  const token = col.get(command.id);
  if (!token) throw col.tombstone(command.id) ? new Deleted('tokens', command.id) : new NotFound('tokens', command.id);
  return token.revoked_at === null ? [{ type: 'TokenRevoked', data: { id: token.id } }] : [];
}

const issued: Apply = (state, event, journal) => {
  const col = state.collections.tokens;
  if (col.get(idOf(event)) || col.tombstone(idOf(event)))
    throw new FoldError(`TokenIssued for token ${idOf(event)}, which exists`);
  const { at } = event.metadata;
  const entry = entryOf(event.data, { revoked_at: null, version: 1, created_at: at, updated_at: at });
  return [change(state.collections.tokens, idOf(event), entry, journal)];
};

const revoked: Apply = (state, event, journal) => {
  const col = state.collections.tokens;
  const token = existing(col, event);
  return [change(col, token.id, stamped(token, { revoked_at: event.metadata.at }, event.metadata.at), journal)];
};

/** The token events, for the fold's table. */
export const TOKEN_EVENTS: Record<string, Apply> = { TokenIssued: issued, TokenRevoked: revoked };
