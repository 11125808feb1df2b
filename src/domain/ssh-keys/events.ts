import { evolveEntry } from '../shared/evolve.js';
import type { Created, Deleted, Entry, Updated } from '../shared/types.js';

export type SshKeyType = 'ED25519' | 'RSA';

export interface SshKeyFields {
  name: string;
  user: string;
  public_key: string;
  /** Sealed by the secrets module; never the plain key. */
  private_key: string;
  type: SshKeyType;
  bit: number;
  fingerprint: string;
  comment: string;
}
export type SshKey = Entry<SshKeyFields>;

export type SshKeyEvent = Created<'SshKey', SshKeyFields> | Updated<'SshKey', SshKeyFields> | Deleted<'SshKey'>;

export const evolve = (entry: SshKey | undefined, event: SshKeyEvent, at: string) => evolveEntry(entry, event, at);
