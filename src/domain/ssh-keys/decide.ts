import { decideChange, decideCreate, type EntryRules, hardDelete } from '../shared/entry-decider.js';
import { InUse } from '../shared/errors.js';
import { assertUnique, loadForWrite } from '../shared/guards.js';
import type { EntryCommand } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import type { SshKeyEvent, SshKeyFields } from './events.js';

/** The key material arrives already checked and sealed: parsing and encryption happen before deciding. */
export type SshKeyCommand = EntryCommand<SshKeyFields>;

export const sshKeyRules: EntryRules<'SshKey', SshKeyFields> = {
  resource: 'ssh-keys',
  prefix: 'SshKey',
  fields: ['name', 'user', 'public_key', 'private_key', 'type', 'bit', 'fingerprint', 'comment'],
  collection: (state) => state['ssh-keys'],
  check(state, next, _before, id) {
    assertUnique(
      state['ssh-keys'],
      id,
      (other) => other.fingerprint === next.fingerprint && other.user === next.user,
      `SSH key ${next.fingerprint} for user "${next.user}"`,
    );
  },
};

export function decide(command: SshKeyCommand, state: ConfigState): SshKeyEvent[] {
  switch (command.type) {
    case 'create':
      return decideCreate(sshKeyRules, command, state);
    case 'replace':
    case 'patch':
      return decideChange(sshKeyRules, command, state);
    case 'delete': {
      const key = loadForWrite('ssh-keys', state['ssh-keys'], command.id, command.ifMatch);
      const users = [...state['storage-areas'].entries.values()].filter((area) => area.id_ssh_key === key.id);
      if (users.length > 0)
        throw new InUse(
          'ssh-keys',
          key.id,
          users.map((a) => ({ resource: 'storage-areas', id: a.id })),
        );
      return hardDelete('SshKey', key.id);
    }
  }
}
