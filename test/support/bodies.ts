import type { ResourceName } from '../../src/domain/resources.js';
import { entriesPath } from '../../src/http/routes/descriptors.js';
import { BASE, type Harness } from './harness.js';
import { makeKey } from './keys.js';

const key = makeKey('ed25519');

/** Entries that other resources' bodies point at. */
export interface Prerequisites {
  server: number;
  sshKey: number;
}

/** Where a resource's entries are served (event rules outside `/config`), and a harness that may use them all. */
export const entriesOf = (resource: ResourceName): string => entriesPath(resource);

/** The harness's requests with an admin's token: every resource's routes, event rules' included. */
export async function adminRequests(h: Harness): Promise<Harness['request']> {
  const issued = await h.service.write.issueToken(
    { name: 'root', role: 'admin', secrets: false, expiresAt: null },
    { actor: 'system', requestId: 'test-admin' },
  );
  const authorization = { Authorization: `Bearer ${issued.token}` };
  return (method, path, options = {}) =>
    h.request(method, path, { ...options, headers: { ...authorization, ...options.headers } });
}

/** A valid POST body for each resource; `n` keeps every unique field unique. */
export function validBody(resource: ResourceName, n: number, refs: Prerequisites): Record<string, unknown> {
  switch (resource) {
    case 'tags':
      return { name: `t${n}`, color: '#000000', background: '#FFFFFF' };
    case 'clients':
      return { libelle: `c${n}` };
    case 'environments':
      return { libelle: `e${n}`, key: `k${n}`, class: 'info', letter: 'E' };
    case 'aliases':
      return { id_mysql_server: refs.server, dns: `a${n}.example.net`, port: 3306 };
    case 'storage-areas':
      return { id_ssh_key: refs.sshKey, ip: '10.0.0.1', path: `/b${n}`, libelle: `area ${n}` };
    case 'servers':
      return {
        id_client: 99,
        id_environment: 1,
        name: `s${n}`,
        ip: `10.9.${n >> 8}.${n & 255}`,
        login: 'l',
        passwd: `server-password-${n}-e7c1`,
      };
    case 'ssh-keys':
      return { name: `k${n}`, user: `u${n}`, public_key: key.publicKey, private_key: key.privateKey };
    case 'event-rules':
      return {
        name: `r${n}`,
        on: ['servers'],
        target_url: `https://hooks.example.net/${n}`,
        target_secret: `whsec_${Buffer.alloc(32, n).toString('base64')}`,
      };
    case 'policies':
      return { name: `p${n}`, operations: ['delete'], resources: ['tags'], approvers: { roles: ['admin'] } };
  }
}

/** A server and an SSH key, for the resources that reference them. */
export async function prerequisites(h: Harness): Promise<Prerequisites> {
  const server = await h.request('POST', `${BASE}/servers`, {
    body: { id_client: 99, id_environment: 1, name: 'base', ip: '10.8.0.1', login: 'l', passwd: 'p' },
  });
  const sshKey = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'base', user: 'base', public_key: key.publicKey, private_key: key.privateKey },
  });
  return { server: server.body.id as number, sshKey: sshKey.body.id as number };
}
