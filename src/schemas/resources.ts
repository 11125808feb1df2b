import { ENVIRONMENT_CLASSES } from '../domain/environments/events.js';
import type { Resource } from '../domain/shared/types.js';
import { bool, color, host, integer, nullable, port, ref, text, timestamp } from './fields.js';
import type { ResourceSchema } from './resource.js';

const PUBLIC_KEY_EXAMPLE =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3pU2CbKDaz1sQ6lJvJZk3xh0yVYZnq5XHc3lBQ9Bqt backup@pmacontrol';

const tags: ResourceSchema = {
  resource: 'tags',
  title: 'Tag',
  fields: {
    name: { schema: text(1, 50), required: true },
    color: { schema: color(), required: true },
    background: { schema: color(), required: true },
  },
  outputExtras: {},
  example: { name: 'galera', color: '#FFFFFF', background: '#337AB7' },
};

const clients: ResourceSchema = {
  resource: 'clients',
  title: 'Client',
  fields: {
    libelle: { schema: text(1, 100), required: true },
    logo: { schema: text(0, 250), default: '' },
    is_monitored: { schema: bool(), default: true },
  },
  outputExtras: { date: { ...timestamp(), description: 'creation time' } },
  example: { libelle: 'ACME', logo: 'acme.png', is_monitored: true },
};

const environments: ResourceSchema = {
  resource: 'environments',
  title: 'Environment',
  fields: {
    libelle: { schema: text(1, 20), required: true },
    key: { schema: text(1, 13, { pattern: '^\\S+$' }), required: true },
    class: { schema: { type: 'string', enum: [...ENVIRONMENT_CLASSES] }, required: true },
    letter: { schema: text(1, 1), required: true },
  },
  outputExtras: {},
  example: { libelle: 'Staging', key: 'staging', class: 'info', letter: 'S' },
};

const aliases: ResourceSchema = {
  resource: 'aliases',
  title: 'Alias',
  fields: {
    id_mysql_server: { schema: ref('server that is not soft-deleted'), required: true },
    dns: { schema: host(200), required: true },
    port: { schema: port(), required: true },
  },
  outputExtras: {},
  filters: { id_mysql_server: integer(1) },
  example: { id_mysql_server: 1, dns: 'db-primary.example.net', port: 3306 },
};

const storageAreas: ResourceSchema = {
  resource: 'storage-areas',
  title: 'StorageArea',
  fields: {
    id_ssh_key: { schema: ref('SSH key'), required: true },
    ip: { schema: host(255), required: true },
    port: { schema: port(), default: 22 },
    path: { schema: text(1, 4096, { pattern: '^/', description: 'an absolute path' }), required: true },
    libelle: { schema: text(1, 64), required: true },
    id_geolocalisation_city: { schema: nullable(integer(1)), default: null, nullable: true },
    id_geolocalisation_country: { schema: nullable(integer(1)), default: null, nullable: true },
  },
  outputExtras: {},
  aliases: { ssh_key: 'id_ssh_key' },
  objectAliases: { géolocalisation: { city: 'id_geolocalisation_city', country: 'id_geolocalisation_country' } },
  filters: { id_ssh_key: integer(1) },
  example: {
    id_ssh_key: 1,
    ip: '10.0.0.12',
    port: 22,
    path: '/srv/backup',
    libelle: 'NAS Paris',
    id_geolocalisation_city: null,
    id_geolocalisation_country: null,
  },
};

const servers: ResourceSchema = {
  resource: 'servers',
  title: 'Server',
  fields: {
    id_client: { schema: ref('client'), required: true },
    id_environment: { schema: ref('environment'), required: true },
    name: { schema: text(1, 100), required: true },
    display_name: { schema: { ...text(0, 100), description: 'defaults to name' } },
    ip: { schema: host(255), required: true },
    port: { schema: port(), default: 3306 },
    hostname: { schema: text(0, 255), default: '' },
    login: { schema: text(1, 32), required: true },
    passwd: { schema: text(0, 1024), requiredOnCreate: true, secret: true, keepWhitespace: true },
    database: { schema: text(1, 64), default: 'mysql' },
    is_ssl: { schema: bool(), default: false },
    ssh_nat: { schema: text(0, 255), default: '' },
    ssh_port: { schema: port(), default: 22 },
    ssh_login: { schema: text(0, 32), default: '' },
    is_sudo: { schema: bool(), default: false },
    is_root: { schema: bool(), default: true },
    is_monitored: { schema: bool(), default: true },
    is_proxy: { schema: bool(), default: false },
    is_vip: { schema: bool(), default: false },
    is_acknowledged: { schema: { ...integer(0), description: 'id of the acknowledging user, 0 for none' }, default: 0 },
    tags: { schema: { type: 'array', items: ref('tag'), maxItems: 1000 }, default: [] },
  },
  outputExtras: { has_passwd: bool(), is_deleted: bool() },
  aliases: { ssl: 'is_ssl' },
  ignored: ['is_password_crypted'],
  filters: { id_client: integer(1), id_environment: integer(1), is_deleted: bool(), tag: integer(1) },
  example: {
    id_client: 1,
    id_environment: 1,
    name: 'db-paris-01',
    ip: '10.0.0.21',
    port: 3306,
    login: 'pmacontrol',
    passwd: 's3cret',
    tags: [1],
  },
};

const sshKeys: ResourceSchema = {
  resource: 'ssh-keys',
  title: 'SshKey',
  fields: {
    name: { schema: text(1, 64), required: true },
    user: { schema: text(1, 64), required: true },
    public_key: {
      schema: text(1, 16384, { description: 'one OpenSSH line: ssh-ed25519 … or ssh-rsa …' }),
      required: true,
    },
    private_key: {
      schema: text(1, 65536, { description: 'unencrypted OpenSSH or PEM private key matching public_key' }),
      requiredOnCreate: true,
      secret: true,
    },
    type: { schema: { type: 'string', enum: ['ED25519', 'RSA'] }, derived: true },
    bit: { schema: integer(256, 16384), derived: true },
    fingerprint: { schema: text(1, 100, { description: 'SHA256:<base64> as ssh-keygen -l prints it' }), derived: true },
    comment: { schema: { ...text(0, 255), description: "defaults to the public key's comment" } },
  },
  outputExtras: { has_private_key: bool(), added_on: { ...timestamp(), description: 'creation time' } },
  aliases: { pub: 'public_key', privée: 'private_key' },
  example: {
    name: 'backup',
    user: 'root',
    public_key: PUBLIC_KEY_EXAMPLE,
    private_key: '-----BEGIN OPENSSH PRIVATE KEY-----\n…\n-----END OPENSSH PRIVATE KEY-----',
  },
};

export const SCHEMAS: Record<Resource, ResourceSchema> = {
  tags,
  clients,
  environments,
  aliases,
  'storage-areas': storageAreas,
  servers,
  'ssh-keys': sshKeys,
};
