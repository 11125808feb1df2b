import { defineResource } from '../shared/declaration.js';
import { boolean, nullableText, oneOf, secret, text } from '../shared/fields.js';

/** What a token may do; each role may do what the ones before it may. */
export const ROLES = ['reader', 'writer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Actors the service names itself: a token with one of these names would pass for the service in
 * the change log. (`cli:<user>`, the actor of the token command, cannot be a token's name: no colon.)
 */
export const RESERVED_ACTORS = ['anonymous', 'system'];

/**
 * A bearer token: its name is the actor of every event its requests cause. The token itself is
 * shown once; the log keeps only a sealed SHA-256 digest of it (never the token, never a plain hash).
 * Issuing one is a creation (`TokenIssued`), revoking it an update of `revoked_at` (`TokenRevoked`),
 * which keeps its first value: revoking again changes nothing.
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
    break_glass: boolean({
      default: false,
      description:
        'may pass an approval policy alone, with a reason (X-Break-Glass-Reason), each use recorded; issued from the CLI only',
    }),
    expires_at: nullableText(0, 40, { description: 'when it stops working (ISO 8601 UTC); null: never' }),
    digest: secret(64, 1024, { description: 'the sealed SHA-256 of the token' }),
    revoked_at: nullableText(0, 40, { description: 'when it was revoked; null: live', setOnce: true }),
  },
  unique: [
    {
      fields: ['name'],
      among: (token) => token.revoked_at === null,
      describe: (token) => `token name "${token.name}" (among live tokens)`,
    },
  ],
  refuse: (token) =>
    RESERVED_ACTORS.includes(String(token.name).toLowerCase())
      ? { field: 'name', code: 'reserved', message: `"${token.name}" is what the change log calls the service itself` }
      : undefined,
  deletion: 'hard',
  eventNames: { created: 'TokenIssued', updated: 'TokenRevoked' },
  example: { name: 'ansible', role: 'writer' },
});
