import { decideChange, decideCreate, type EntryRules, hardDelete } from '../shared/entry-decider.js';
import { assertReference, assertUnique, loadForWrite, sameText } from '../shared/guards.js';
import type { EntryCommand } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import type { AliasEvent, AliasFields } from './events.js';

export type AliasCommand = EntryCommand<AliasFields>;

export const aliasRules: EntryRules<'Alias', AliasFields> = {
  resource: 'aliases',
  prefix: 'Alias',
  fields: ['id_mysql_server', 'dns', 'port'],
  collection: (state) => state.aliases,
  check(state, next, before, id) {
    if (next.id_mysql_server !== before?.id_mysql_server) {
      assertReference('id_mysql_server', state.servers, next.id_mysql_server, 'server', (s) => !s.is_deleted);
    }
    assertUnique(
      state.aliases,
      id,
      (other) => other.port === next.port && sameText(other.dns, next.dns),
      `alias ${next.dns}:${next.port}`,
    );
  },
};

export function decide(command: AliasCommand, state: ConfigState): AliasEvent[] {
  switch (command.type) {
    case 'create':
      return decideCreate(aliasRules, command, state);
    case 'replace':
    case 'patch':
      return decideChange(aliasRules, command, state);
    case 'delete':
      return hardDelete('Alias', loadForWrite('aliases', state.aliases, command.id, command.ifMatch).id);
  }
}
