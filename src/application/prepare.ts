import type { EntryCommand, Fields, Input } from '../domain/commands.js';
import { type ResourceName, resourceOf } from '../domain/resources.js';
import { Conflict } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { ExpectedVersion } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import type { SecretBox } from './secrets.js';

type Of<R extends ResourceName, C> = C & { resource: R };

/** What a route asks for: fields checked against the resource's schema, secrets still in plain text. */
export type WriteRequestOf<R extends ResourceName> =
  | Of<R, { kind: 'create'; id?: number; input: Partial<Input<R>> }>
  | Of<
      R,
      { kind: 'replace' | 'patch'; id: number; input: Partial<Input<R>>; expected?: ExpectedVersion; restore?: boolean }
    >
  | Of<R, { kind: 'delete'; id: number; expected?: ExpectedVersion }>
  | Of<
      R,
      {
        kind: 'revert';
        id: number;
        toVersion: number;
        expected?: ExpectedVersion;
        /** The entry's values at `toVersion`, read from the change log before deciding; undefined: never had it. */
        values?: Record<string, unknown>;
      }
    >;

export type WriteRequest = { [R in ResourceName]: WriteRequestOf<R> }[ResourceName];

export interface PrepareDeps {
  secrets: SecretBox;
}

type Values = Record<string, unknown>;

/**
 * The secrets of an old version as the entry is to carry them: the entry's own sealed value where it
 * opens to the same secret (a revert that leaves a password as it is changes nothing: no diff member,
 * no history line), else sealed again under the current key (a version from before a key rotation
 * holds values sealed under a retired key, which the entry must not carry again).
 */
function resealed(fields: readonly string[], values: Values, current: Values | undefined, deps: PrepareDeps): Values {
  const copy = { ...values };
  for (const field of fields) {
    const sealed = copy[field];
    if (typeof sealed !== 'string' || sealed === '') continue;
    const plain = deps.secrets.tryOpen(sealed as Sealed);
    if (plain === undefined) {
      throw new Conflict(
        `the ${field} of that version was sealed under a retired key this instance was not given ` +
          '(CONFIG_RETIRED_SECRET_KEYS or DATA_DIR/secret.key.retired)',
      );
    }
    const kept = current?.[field];
    const same = typeof kept === 'string' && kept !== '' && deps.secrets.tryOpen(kept as Sealed) === plain;
    copy[field] = same ? kept : deps.secrets.seal(plain);
  }
  return copy;
}

/**
 * Turns a request into a command: the steps a decider must not take. The resource's own preparation
 * runs (an SSH key pair is checked and its derived fields filled in), every secret the resource
 * declares is sealed (a secret sent again unchanged keeps its stored sealed value, so that nothing
 * changes), and a revert's values (of the version it asks for) are sealed under the current key.
 */
export function prepare(request: WriteRequest, state: ConfigState, deps: PrepareDeps): EntryCommand {
  const resource = resourceOf(request.resource);
  const current =
    'id' in request && request.id !== undefined ? state.collections[request.resource].get(request.id) : undefined;
  if (request.kind === 'delete') return request;
  if (request.kind === 'revert') {
    const { values, ...rest } = request;
    const sealed = values ? { values: resealed(resource.secretFields, values, current, deps) } : {};
    return { ...rest, ...sealed } as EntryCommand;
  }
  // The decider answers 404 for an entry that is not there.
  if (request.kind !== 'create' && !current) return { ...request, fields: {} } as EntryCommand;
  const open = (sealed: Sealed) => deps.secrets.tryOpen(sealed);
  const prepared = resource.declaration.prepare?.(request.input as Values, { mode: request.kind, current, open });
  const fields: Values = { ...(prepared ?? request.input) };
  for (const field of resource.secretFields) {
    const plain = fields[field];
    if (typeof plain !== 'string') continue;
    const stored = current?.[field] as Sealed | undefined;
    fields[field] = stored !== undefined && open(stored) === plain ? stored : deps.secrets.seal(plain);
  }
  const { input: _sent, ...command } = request;
  return { ...command, fields: fields as Fields } as EntryCommand;
}
