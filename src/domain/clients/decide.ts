import type { ServerEvent } from '../servers/events.js';
import { decideChange, decideCreate, type EntryRules, hardDelete } from '../shared/entry-decider.js';
import { DeleteGuarded, InUse } from '../shared/errors.js';
import { assertUnique, loadForWrite, sameText } from '../shared/guards.js';
import type { EntryCommand } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import type { ClientEvent, ClientFields } from './events.js';

export type ClientCommand = EntryCommand<ClientFields>;

/** PmaControl's catch-all client: soft-deleted servers of a deleted client land here. */
export const FALLBACK_CLIENT_ID = 99;

export const clientRules: EntryRules<'Client', ClientFields> = {
  resource: 'clients',
  prefix: 'Client',
  fields: ['libelle', 'logo', 'is_monitored'],
  collection: (state) => state.clients,
  check(state, next, _before, id) {
    assertUnique(
      state.clients,
      id,
      (other) => sameText(other.libelle, next.libelle),
      `client libelle "${next.libelle}"`,
    );
  },
};

export function decide(command: ClientCommand, state: ConfigState): (ClientEvent | ServerEvent)[] {
  switch (command.type) {
    case 'create':
      return decideCreate(clientRules, command, state);
    case 'replace':
    case 'patch':
      return decideChange(clientRules, command, state);
    case 'delete': {
      const client = loadForWrite('clients', state.clients, command.id, command.ifMatch);
      if (client.id === FALLBACK_CLIENT_ID)
        throw new DeleteGuarded('clients', client.id, 'it receives the servers of deleted clients');
      const servers = [...state.servers.entries.values()].filter((server) => server.id_client === client.id);
      const live = servers.filter((server) => !server.is_deleted);
      if (live.length > 0)
        throw new InUse(
          'clients',
          client.id,
          live.map((s) => ({ resource: 'servers', id: s.id })),
        );
      const move: ServerEvent[] = servers.map((server) => ({
        type: 'ServerUpdated',
        data: { id: server.id, changes: { id_client: FALLBACK_CLIENT_ID } },
      }));
      return hardDelete('Client', client.id, move);
    }
  }
}
