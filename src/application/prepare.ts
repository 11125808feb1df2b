import type { AnyCommand } from '../domain/decide.js';
import { fieldError } from '../domain/shared/errors.js';
import type { SecretBox } from '../domain/shared/secrets.js';
import type { Resource } from '../domain/shared/types.js';
import type { SshKey } from '../domain/ssh-keys/events.js';
import { analysePublicKey, assertPrivateKeyMatches } from '../domain/ssh-keys/keys.js';
import type { ConfigState } from '../domain/state.js';

type Fields = Record<string, unknown>;

/** What a route asks for: fields checked against the schema, secrets still in plain text. */
export type WriteRequest =
  | { type: 'create'; id?: number; fields: Fields }
  | { type: 'replace'; id: number; fields: Fields; ifMatch?: string }
  | { type: 'patch'; id: number; fields: Fields; ifMatch?: string; restore?: boolean }
  | { type: 'delete'; id: number; ifMatch?: string };

/**
 * Turns a request into a command: the impure steps a decider must not do. Secrets are sealed
 * (or the stored sealed value is kept when the same secret is sent again, so that an unchanged
 * write records nothing), SSH keys are parsed and their derived fields filled in.
 */
export function prepare(resource: Resource, request: WriteRequest, state: ConfigState, secrets: SecretBox): AnyCommand {
  if (request.type === 'delete') return request;
  const current = request.type === 'create' ? undefined : state[resource].entries.get(request.id);
  if (request.type !== 'create' && !current) return request; // the decider answers 404
  const fields = { ...request.fields };
  const sealed = (field: 'passwd' | 'private_key') => {
    const plain = fields[field];
    if (typeof plain !== 'string') return;
    const stored = (current as Fields | undefined)?.[field] as string | undefined;
    fields[field] = stored !== undefined && openOrUndefined(secrets, stored) === plain ? stored : secrets.seal(plain);
  };
  if (resource === 'servers') {
    if (request.type !== 'patch' && fields.display_name === undefined) fields.display_name = fields.name;
    sealed('passwd');
  }
  if (resource === 'ssh-keys') {
    deriveKeyFields(request.type, fields, current as SshKey | undefined, secrets);
    sealed('private_key');
  }
  return { ...request, fields } as AnyCommand;
}

const KEY_INPUTS = ['public_key', 'private_key', 'type', 'bit', 'fingerprint'];

function deriveKeyFields(
  type: WriteRequest['type'],
  fields: Fields,
  current: SshKey | undefined,
  secrets: SecretBox,
): void {
  if (type === 'patch' && !KEY_INPUTS.some((f) => f in fields)) return;
  const publicText = (fields.public_key ?? current?.public_key) as string;
  const privateText =
    (fields.private_key as string | undefined) ?? (current ? openOrUndefined(secrets, current.private_key) : undefined);
  const facts = analysePublicKey(publicText);
  if (privateText === undefined) {
    throw fieldError(
      'private_key',
      'required',
      current
        ? "the stored key cannot be decrypted with this instance's CONFIG_SECRET_KEY; send it again"
        : 'is required',
    );
  }
  assertPrivateKeyMatches(privateText, facts);
  if (fields.type !== undefined && String(fields.type).toUpperCase() !== facts.type) {
    throw fieldError('type', 'mismatch', `is ${facts.type} for this key`);
  }
  if (fields.bit !== undefined && fields.bit !== facts.bit)
    throw fieldError('bit', 'mismatch', `is ${facts.bit} for this key`);
  if (
    fields.fingerprint !== undefined &&
    fields.fingerprint !== facts.fingerprint &&
    String(fields.fingerprint).toUpperCase() !== facts.legacyFingerprint
  ) {
    throw fieldError('fingerprint', 'mismatch', `is ${facts.fingerprint} for this key`);
  }
  Object.assign(fields, { type: facts.type, bit: facts.bit, fingerprint: facts.fingerprint });
  if (type !== 'patch' && fields.comment === undefined) fields.comment = facts.comment;
}

/** A value sealed under another key (CONFIG_SECRET_KEY changed) reads as unknown rather than failing the request. */
function openOrUndefined(secrets: SecretBox, sealed: string): string | undefined {
  try {
    return secrets.open(sealed);
  } catch {
    return undefined;
  }
}
