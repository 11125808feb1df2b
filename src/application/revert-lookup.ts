import type { ChangeItem } from '../../projections/changes.js';
import { type ResourceName, resourceOf } from '../domain/resources.js';
import type { ConfigState } from '../domain/state.js';
import type { Changes } from './changes.js';
import type { WriteRequestOf } from './prepare.js';

/**
 * What a revert needs from the change log, read before it is decided (it never changes once
 * written): the values of the version asked for, and, for an entry hard-deleted now, what its
 * delete did to other entries. Any other write is returned as it is.
 */
export async function lookedUp<R extends ResourceName>(
  request: WriteRequestOf<R>,
  changes: Changes,
  state: ConfigState,
): Promise<{ asked: WriteRequestOf<R>; deletion?: ChangeItem }> {
  if (request.kind !== 'revert') return { asked: request };
  const values = await changes.versionOf(request.resource, request.id, request.toVersion);
  let deletion: ChangeItem | undefined;
  if (state.collections[request.resource].tombstone(request.id)) {
    const type = resourceOf(request.resource).events.deleted;
    const query = { resource: request.resource, id: request.id, type, order: 'desc' } as const;
    for await (const item of changes.changes(query)) {
      deletion = item;
      break;
    }
  }
  return { asked: { ...request, values }, deletion };
}
