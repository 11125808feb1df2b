import { decideChange, decideCreate, type EntryRules, hardDelete } from '../shared/entry-decider.js';
import { assertReference, loadForWrite } from '../shared/guards.js';
import type { EntryCommand } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import type { StorageAreaEvent, StorageAreaFields } from './events.js';

export type StorageAreaCommand = EntryCommand<StorageAreaFields>;

export const storageAreaRules: EntryRules<'StorageArea', StorageAreaFields> = {
  resource: 'storage-areas',
  prefix: 'StorageArea',
  fields: ['id_ssh_key', 'ip', 'port', 'path', 'libelle', 'id_geolocalisation_city', 'id_geolocalisation_country'],
  collection: (state) => state['storage-areas'],
  check(state, next, before) {
    if (next.id_ssh_key !== before?.id_ssh_key)
      assertReference('id_ssh_key', state['ssh-keys'], next.id_ssh_key, 'SSH key');
  },
};

export function decide(command: StorageAreaCommand, state: ConfigState): StorageAreaEvent[] {
  switch (command.type) {
    case 'create':
      return decideCreate(storageAreaRules, command, state);
    case 'replace':
    case 'patch':
      return decideChange(storageAreaRules, command, state);
    case 'delete':
      return hardDelete(
        'StorageArea',
        loadForWrite('storage-areas', state['storage-areas'], command.id, command.ifMatch).id,
      );
  }
}
