import type { Created, Deleted, Entry, EntryMeta, Updated } from './types.js';

export const created = <F extends object>(data: { id: number } & F, at: string): Entry<F> =>
  ({ ...data, version: 1, created_at: at, updated_at: at }) as Entry<F>;

export const updated = <E extends EntryMeta>(entry: E, changes: NoInfer<Partial<E>>, at: string): E => ({
  ...entry,
  ...changes,
  version: entry.version + 1,
  updated_at: at,
});

/** An event for an entry the fold does not hold means the log and the read model disagree. */
export function present<E>(entry: E | undefined, type: string, id: number): E {
  if (!entry) throw new Error(`${type} for entry ${id}, which the read model does not hold`);
  return entry;
}

export function assertNever(value: never): never {
  throw new Error(`unhandled event ${JSON.stringify(value)}`);
}

type StandardEvent<P extends string, F> = Created<P, F> | Updated<P, F> | Deleted<P>;

/** The fold shared by every resource whose events are only Created / Updated / Deleted (hard). */
export function evolveEntry<P extends string, F extends object>(
  entry: Entry<F> | undefined,
  event: StandardEvent<P, F>,
  at: string,
): Entry<F> | undefined {
  const kind = event.type.slice(-7) as 'Created' | 'Updated' | 'Deleted';
  switch (kind) {
    case 'Created':
      return created((event as Created<P, F>).data, at);
    case 'Updated':
      return updated(
        present(entry, event.type, event.data.id),
        (event as Updated<P, F>).data.changes as Partial<Entry<F>>,
        at,
      );
    case 'Deleted':
      return undefined;
    default:
      return assertNever(kind);
  }
}
