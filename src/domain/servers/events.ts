import { assertNever, created, present, updated } from '../shared/evolve.js';
import type { Created, DomainEvent, Entry, Updated } from '../shared/types.js';

export interface ServerFields {
  id_client: number;
  id_environment: number;
  name: string;
  display_name: string;
  ip: string;
  port: number;
  hostname: string;
  login: string;
  /** Sealed by the secrets module; never the plain password. */
  passwd: string;
  database: string;
  is_ssl: boolean;
  ssh_nat: string;
  ssh_port: number;
  ssh_login: string;
  is_sudo: boolean;
  is_root: boolean;
  is_monitored: boolean;
  is_proxy: boolean;
  is_vip: boolean;
  is_acknowledged: number;
  tags: number[];
}
export type Server = Entry<ServerFields> & { is_deleted: boolean };

/** Servers are deleted softly: the entry stays, flagged, and can be restored. */
export type ServerEvent =
  | Created<'Server', ServerFields>
  | Updated<'Server', ServerFields>
  | DomainEvent<'ServerDeleted', { id: number }>
  | DomainEvent<'ServerRestored', { id: number }>;

export function evolve(entry: Server | undefined, event: ServerEvent, at: string): Server {
  switch (event.type) {
    case 'ServerCreated':
      return { ...created(event.data, at), is_deleted: false };
    case 'ServerUpdated':
      return updated(present(entry, event.type, event.data.id), event.data.changes, at);
    case 'ServerDeleted':
      return updated(present(entry, event.type, event.data.id), { is_deleted: true }, at);
    case 'ServerRestored':
      return updated(present(entry, event.type, event.data.id), { is_deleted: false }, at);
    default:
      return assertNever(event);
  }
}
