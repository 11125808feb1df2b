import type { COLLECTIONS, CollectionName, RESOURCES, ResourceName } from './resources.js';
import type { FieldsOf, InputOf } from './shared/declaration.js';
import type { ExpectedVersion } from './shared/types.js';

/** A collection's field values as a command carries them: checked, defaults applied, secrets sealed. */
export type Fields<R extends CollectionName = ResourceName> = FieldsOf<(typeof COLLECTIONS)[R]>;

/** What a client sent, checked against the resource's schema: secrets still in plain text. */
export type Input<R extends ResourceName = ResourceName> = InputOf<(typeof RESOURCES)[R]>;

type Of<R extends CollectionName, C> = C & { resource: R };

/** Commands on one resource's entries; ids and values arrive in the command, the decider adds nothing. */
export type EntryCommandOf<R extends CollectionName> =
  | Of<R, { kind: 'create'; id?: number; fields: Fields<R> }>
  /** `fields` is complete (defaults applied); a secret left undefined keeps its stored value. */
  | Of<R, { kind: 'replace'; id: number; fields: Fields<R>; expected?: ExpectedVersion }>
  /** `restore`: `{"is_deleted": false}` on a soft-deleted entry. */
  | Of<R, { kind: 'patch'; id: number; fields: Partial<Fields<R>>; expected?: ExpectedVersion; restore?: boolean }>
  | Of<R, { kind: 'delete'; id: number; expected?: ExpectedVersion }>
  /**
   * `values`: the entry's values at `toVersion` (soft-deleted flag included), looked up from the
   * read models; undefined when the entry never had that version.
   */
  | Of<
      R,
      {
        kind: 'revert';
        id: number;
        toVersion: number;
        values?: Fields<R> & { is_deleted?: boolean };
        expected?: ExpectedVersion;
      }
    >;

/** Commands on the entries of any collection: the configuration's resources and the tokens. */
export type Command = { [R in CollectionName]: EntryCommandOf<R> }[CollectionName];

/** Commands on the configuration's resources (what clients send to /config). */
export type EntryCommand = { [R in ResourceName]: EntryCommandOf<R> }[ResourceName];
