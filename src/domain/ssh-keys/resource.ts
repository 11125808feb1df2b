import { defineResource, type PrepareContext } from '../shared/declaration.js';
import { fieldError } from '../shared/errors.js';
import type { Sealed } from '../shared/fields.js';
import { derived, integer, oneOf, secret, text } from '../shared/fields.js';
import { analysePublicKey, assertPrivateKeyMatches, MAX_RSA_BITS, provesItsPair } from './keys.js';

const PUBLIC_KEY_EXAMPLE =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3pU2CbKDaz1sQ6lJvJZk3xh0yVYZnq5XHc3lBQ9Bqt backup@pmacontrol';

const KEY_INPUTS = ['public_key', 'private_key', 'type', 'bit', 'fingerprint'];

/**
 * Derives `type`, `bit`, `fingerprint` (and the default `comment`) from the key pair, and checks that
 * the private key is the public key's other half and that sent derived values match.
 */
function prepareKeyPair(fields: Record<string, unknown>, { mode, current, open }: PrepareContext) {
  if (mode === 'patch' && !KEY_INPUTS.some((f) => f in fields)) return fields;
  const publicText = (fields.public_key ?? current?.public_key) as string;
  const privateText =
    (fields.private_key as string | undefined) ?? (current ? open(current.private_key as Sealed) : undefined);
  const facts = analysePublicKey(publicText);
  if (privateText === undefined) {
    const why = current ? "the stored one cannot be opened with this instance's key; send it again" : 'is required';
    throw fieldError('private_key', 'required', why);
  }
  assertPrivateKeyMatches(privateText, facts);
  if (fields.type !== undefined && String(fields.type).toUpperCase() !== facts.type) {
    throw fieldError('type', 'mismatch', `is ${facts.type} for this key`);
  }
  if (fields.bit !== undefined && fields.bit !== facts.bit) {
    throw fieldError('bit', 'mismatch', `is ${facts.bit} for this key`);
  }
  const sent = fields.fingerprint;
  if (sent !== undefined && sent !== facts.fingerprint && String(sent).toUpperCase() !== facts.legacyFingerprint) {
    throw fieldError('fingerprint', 'mismatch', `is ${facts.fingerprint} for this key`);
  }
  const comment = mode !== 'patch' && fields.comment === undefined ? { comment: facts.comment } : {};
  return { ...fields, type: facts.type, bit: facts.bit, fingerprint: facts.fingerprint, ...comment };
}

/** An SSH key pair PmaControl uses to reach hosts and storage areas (PmaControl `ssh_key`). */
export const sshKeys = defineResource({
  name: 'ssh-keys',
  title: 'SshKey',
  label: 'SSH key',
  plural: 'SshKeys',
  category: 'sshKey',
  description: 'SSH key pairs PmaControl uses to reach hosts and backup storage areas (PmaControl `ssh_key`).',
  fields: {
    name: text(1, 64, { required: true, search: true, description: 'a name for people' }),
    user: text(1, 64, { required: true, search: true, description: 'the SSH user the key logs in as' }),
    public_key: text(1, 16384, {
      required: true,
      aliases: ['pub'],
      pmacontrol: { plainWhen: /^(ssh|ecdsa|sk)-/ },
      description: 'one OpenSSH public key line: `ssh-ed25519 …` or `ssh-rsa …` (RSA from 2,048 to 16,384 bits)',
      example: PUBLIC_KEY_EXAMPLE,
    }),
    private_key: secret(1, 65536, {
      label: 'private key',
      example: '-----BEGIN OPENSSH PRIVATE KEY-----\n…',
      required: 'on-create',
      aliases: ['privée'],
      pmacontrol: { plainWhen: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
      description:
        'the unencrypted OpenSSH or PEM private key matching `public_key`: write-only, sealed before it is stored, ' +
        'never returned (`has_private_key` says one is set); on PUT, leaving it out keeps the stored one',
    }),
    type: derived(oneOf(['ED25519', 'RSA'], { description: 'the key type, derived from the key', example: 'ED25519' })),
    bit: derived(
      integer(256, MAX_RSA_BITS, { description: 'the key size in bits, derived from the key', example: 256 }),
    ),
    fingerprint: derived(
      text(1, 100, {
        description:
          "`SHA256:<base64>` as `ssh-keygen -l` prints it, derived from the key; PmaControl's legacy 40-hex form is accepted on input",
        example: 'SHA256:bv+lkv4roCcoyLUbpFK1/Sx/Iip53GuJMKzt1mTQ4Lo',
      }),
    ),
    comment: text(0, 255, {
      search: true,
      description: "a comment; defaults to the public key's comment",
      example: 'backup@pmacontrol',
    }),
  },
  unique: [
    {
      fields: ['fingerprint', 'user'],
      describe: (key) => `SSH key ${key.fingerprint} for user "${key.user}"`,
    },
  ],
  pmacontrol: { table: 'ssh_key', createdAt: 'added_on' },
  deletion: 'hard',
  cryptedInput: 'is_password_crypted',
  prepare: prepareKeyPair,
  prove: async ({ private_key: privateKey }) =>
    typeof privateKey === 'string' && !(await provesItsPair(privateKey))
      ? [{ field: 'private_key', code: 'key_mismatch', message: 'does not match public_key' }]
      : [],
  outputs: {
    added_on: {
      schema: { type: 'string', format: 'date-time' },
      description: 'when the key was added (PmaControl `added_on`)',
      from: (key) => key.created_at,
      example: '2026-01-15T09:30:00.000Z',
    },
  },
  example: {
    name: 'backup',
    user: 'root',
    public_key: PUBLIC_KEY_EXAMPLE,
    private_key: '-----BEGIN OPENSSH PRIVATE KEY-----\n…\n-----END OPENSSH PRIVATE KEY-----',
  },
});
