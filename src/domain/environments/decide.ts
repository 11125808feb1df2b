import { decideChange, decideCreate, type EntryRules, hardDelete } from '../shared/entry-decider.js';
import { DeleteGuarded, InUse } from '../shared/errors.js';
import { assertUnique, loadForWrite, sameText } from '../shared/guards.js';
import type { EntryCommand } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import type { EnvironmentEvent, EnvironmentFields } from './events.js';

export type EnvironmentCommand = EntryCommand<EnvironmentFields>;

/** Environments 1–6 are PmaControl's own (Production … Test) and cannot be deleted. */
export const LAST_BUILT_IN_ENVIRONMENT = 6;

export const environmentRules: EntryRules<'Environment', EnvironmentFields> = {
  resource: 'environments',
  prefix: 'Environment',
  fields: ['libelle', 'key', 'class', 'letter'],
  collection: (state) => state.environments,
  check(state, next, _before, id) {
    assertUnique(
      state.environments,
      id,
      (other) => sameText(other.libelle, next.libelle),
      `environment libelle "${next.libelle}"`,
    );
  },
};

export function decide(command: EnvironmentCommand, state: ConfigState): EnvironmentEvent[] {
  switch (command.type) {
    case 'create':
      return decideCreate(environmentRules, command, state);
    case 'replace':
    case 'patch':
      return decideChange(environmentRules, command, state);
    case 'delete': {
      const env = loadForWrite('environments', state.environments, command.id, command.ifMatch);
      if (env.id <= LAST_BUILT_IN_ENVIRONMENT)
        throw new DeleteGuarded('environments', env.id, 'environments 1 to 6 are built in');
      const users = [...state.servers.entries.values()].filter((s) => s.id_environment === env.id && !s.is_deleted);
      if (users.length > 0)
        throw new InUse(
          'environments',
          env.id,
          users.map((s) => ({ resource: 'servers', id: s.id })),
        );
      return hardDelete('Environment', env.id);
    }
  }
}
