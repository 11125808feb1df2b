export const RESOURCES = [
  'tags',
  'clients',
  'environments',
  'aliases',
  'storage-areas',
  'servers',
  'ssh-keys',
] as const;
export type Resource = (typeof RESOURCES)[number];

/** The largest id: ids are JSON numbers, exact up to 2^53 − 1. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A domain event as deciders produce it: a past-tense type and flat JSON-safe data. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** Who caused an event and when; stored beside the data, never inside it. */
export interface EventMetadata {
  actor: string;
  request_id: string;
  at: string;
  /** The entry's stream name in EventStoreDB category form, e.g. `sshKey-12`; absent for events about no entry. */
  entry?: string;
}

export interface EntryMeta {
  id: number;
  version: number;
  created_at: string;
  updated_at: string;
}

export type Entry<F> = EntryMeta & F;

export type Created<P extends string, F> = DomainEvent<`${P}Created`, { id: number } & F>;
export type Updated<P extends string, F> = DomainEvent<`${P}Updated`, { id: number; changes: Partial<F> }>;
export type Deleted<P extends string> = DomainEvent<`${P}Deleted`, { id: number }>;

/** One resource's entries, and what is needed so that an id is never reused. */
export interface Collection<E extends EntryMeta> {
  entries: Map<number, E>;
  /** Hard-deleted ids: they answer 404 `deleted` and cannot be taken again. */
  deleted: Set<number>;
  /** The highest id ever used; allocation continues above it. */
  lastId: number;
}

export const emptyCollection = <E extends EntryMeta>(): Collection<E> => ({
  entries: new Map(),
  deleted: new Set(),
  lastId: 0,
});

export interface Command<F> {
  create: { type: 'create'; id?: number; fields: F };
  /** `fields` is complete: defaults were applied; a write-only field left undefined keeps its stored value. */
  replace: { type: 'replace'; id: number; fields: F; ifMatch?: string };
  patch: { type: 'patch'; id: number; fields: Partial<F>; ifMatch?: string };
  delete: { type: 'delete'; id: number; ifMatch?: string };
}
export type EntryCommand<F> = Command<F>[keyof Command<F>];
