import { FALLBACK_CLIENT_ID } from '../clients/resource.js';
import { defineResource } from '../shared/declaration.js';
import { boolean, host, integer, port, ref, refs, secret, text } from '../shared/fields.js';
import { MAX_ID } from '../shared/types.js';

/** A MariaDB/MySQL server (or proxy, or virtual IP) that PmaControl monitors (PmaControl `mysql_server`). */
export const servers = defineResource({
  name: 'servers',
  title: 'Server',
  label: 'server',
  plural: 'Servers',
  category: 'server',
  description:
    'MariaDB/MySQL servers, proxies and virtual IPs that PmaControl monitors (PmaControl `mysql_server`). ' +
    'Deleted softly: a deleted server stays listed with `is_deleted: true` and can be restored.',
  fields: {
    id_client: ref('clients', {
      required: true,
      whenTargetDeleted: { live: 'refuse', softDeleted: { moveTo: FALLBACK_CLIENT_ID } },
      description: 'the client that owns the server',
    }),
    id_environment: ref('environments', {
      required: true,
      whenTargetDeleted: { live: 'refuse', softDeleted: 'keep' },
      description: 'the environment the server belongs to',
    }),
    name: text(1, 100, {
      required: true,
      search: true,
      description: 'the identifier PmaControl uses, unique among all servers, deleted ones included (case-insensitive)',
    }),
    display_name: text(0, 100, {
      defaultFrom: { from: (fields) => fields.name as string, description: 'the name' },
      pmacontrol: { emptyIsAbsent: true },
      search: true,
      description: 'the name shown to people; defaults to `name`',
    }),
    ip: host(255, {
      required: true,
      search: true,
      description: 'the address PmaControl connects to: an IPv4 or IPv6 address, or a host name',
    }),
    port: port({ default: 3306, description: 'the MySQL port; (`ip`, `port`) is unique among all servers' }),
    hostname: text(0, 255, {
      default: '',
      search: true,
      description: "the machine's own host name, for people (PmaControl connects to `ip`, not to this)",
    }),
    login: text(1, 32, { required: true, description: 'the MySQL user PmaControl logs in with' }),
    passwd: secret(0, 1024, {
      label: 'password',
      example: 'monitor-password',
      required: 'on-create',
      description:
        "that user's password: write-only, sealed before it is stored, never returned (`has_passwd` says one is set); " +
        'on PUT, leaving it out keeps the stored one',
    }),
    database: text(1, 64, { default: 'mysql', description: 'the database to connect to' }),
    is_ssl: boolean({ default: false, aliases: ['ssl'], description: 'connect over TLS' }),
    ssh_nat: text(0, 255, {
      default: '',
      search: true,
      description: 'the address SSH goes through when the host sits behind NAT; empty: SSH goes to `ip`',
    }),
    ssh_port: port({ default: 22, description: 'the SSH port of the host' }),
    ssh_login: text(0, 32, { default: '', description: 'the SSH user on the host; empty: no SSH access' }),
    is_sudo: boolean({ default: false, description: 'the SSH user runs system commands through sudo' }),
    is_root: boolean({ default: true, description: 'the SSH user is root: system commands need no sudo' }),
    is_monitored: boolean({ default: true, description: 'PmaControl polls this server' }),
    is_proxy: boolean({
      default: false,
      description: 'the address is a proxy (ProxySQL, MaxScale, HAProxy …) in front of servers, not a server itself',
    }),
    is_vip: boolean({
      default: false,
      description: 'the address is a virtual IP that moves between servers (failover), not one machine',
    }),
    is_acknowledged: integer(0, MAX_ID, {
      default: 0,
      description: "id of the PmaControl user who acknowledged the server's current alert; 0 for none",
    }),
    tags: refs('tags', 1000, {
      default: [],
      filterAs: 'tag',
      whenTargetDeleted: 'remove',
      description: 'ids of the tags the server carries, without duplicates, in ascending order',
    }),
    ssh_keys: refs('ssh-keys', 100, {
      default: [],
      filterAs: 'ssh_key',
      whenTargetDeleted: 'remove',
      description:
        'ids of the SSH keys PmaControl may use to reach the host, without duplicates, in ascending order ' +
        '(PmaControl `link__mysql_server__ssh_key`)',
    }),
  },
  unique: [
    { fields: ['name'], caseInsensitive: ['name'], describe: (server) => `server name "${server.name}"` },
    {
      fields: ['ip', 'port'],
      caseInsensitive: ['ip'],
      describe: (server) => `server address ${server.ip}:${server.port}`,
    },
  ],
  pmacontrol: {
    table: 'mysql_server',
    cryptedColumn: 'is_password_crypted',
    links: {
      tags: { table: 'link__mysql_server__tag', owner: 'id_mysql_server', target: 'id_tag' },
      ssh_keys: { table: 'link__mysql_server__ssh_key', owner: 'id_mysql_server', target: 'id_ssh_key' },
    },
  },
  deletion: 'soft',
  cryptedInput: 'is_password_crypted',
  outputs: {
    is_deleted: {
      schema: { type: 'boolean' },
      description: 'soft-deleted: set by DELETE, cleared by `PATCH {"is_deleted": false}`',
      from: (server) => server.is_deleted === true,
      example: false,
    },
  },
  example: {
    id_client: 99,
    id_environment: 1,
    name: 'db-paris-01',
    ip: '10.0.0.21',
    port: 3306,
    login: 'pmacontrol',
    passwd: 's3cret',
    tags: [],
  },
});
