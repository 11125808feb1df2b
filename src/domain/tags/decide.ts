import type { ServerEvent } from '../servers/events.js';
import { decideChange, decideCreate, type EntryRules, hardDelete } from '../shared/entry-decider.js';
import { assertUnique, loadForWrite, sameText } from '../shared/guards.js';
import type { EntryCommand } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import type { TagEvent, TagFields } from './events.js';

export type TagCommand = EntryCommand<TagFields>;

export const tagRules: EntryRules<'Tag', TagFields> = {
  resource: 'tags',
  prefix: 'Tag',
  fields: ['name', 'color', 'background'],
  collection: (state) => state.tags,
  check(state, next, _before, id) {
    assertUnique(state.tags, id, (other) => sameText(other.name, next.name), `tag name "${next.name}"`);
  },
};

export function decide(command: TagCommand, state: ConfigState): (TagEvent | ServerEvent)[] {
  switch (command.type) {
    case 'create':
      return decideCreate(tagRules, command, state);
    case 'replace':
    case 'patch':
      return decideChange(tagRules, command, state);
    case 'delete': {
      const tag = loadForWrite('tags', state.tags, command.id, command.ifMatch);
      // Every server, soft-deleted ones included, loses the tag in the same append.
      const untag: ServerEvent[] = [...state.servers.entries.values()]
        .filter((server) => server.tags.includes(tag.id))
        .map((server) => ({
          type: 'ServerUpdated',
          data: { id: server.id, changes: { tags: server.tags.filter((t) => t !== tag.id) } },
        }));
      return hardDelete('Tag', tag.id, untag);
    }
  }
}
