// Over 300 lines: two operations whose schemas and examples are written out member by member.
import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { json, problems, ref, requestIdHeader } from './config-operations.js';

/** The operations PmaControl's own automation calls: its push, and an Ansible inventory. */

const NUMBER_OR_DIGITS = (description: string): SchemaObject => ({
  oneOf: [
    { type: 'integer', minimum: 1, maximum: 65535 },
    { type: 'string', pattern: '^\\s*\\d{1,10}\\s*$' },
  ],
  description: `${description}: a number, or a string of digits as PmaControl sends it`,
});
const FLAG = (description: string): SchemaObject => ({
  oneOf: [
    { type: 'boolean' },
    { type: 'integer', enum: [0, 1] },
    { type: 'string', enum: ['0', '1', 'true', 'false'] },
  ],
  description: `${description}: true or false, also 1 or 0`,
});
const TAGS: SchemaObject = {
  oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }],
  description:
    'tag names (or one string of names separated by commas): found by name or created, and added to the server',
};

const MYSQL_ITEM: SchemaObject = {
  type: 'object',
  description:
    'A server, matched by (`ip`, `port`): created if no server has that address, else changed where it differs. ' +
    'A value left out is left as it is (a new server takes its default).',
  properties: {
    fqdn: {
      type: 'string',
      description: 'the address PmaControl connects to (`ip`, unless `ip` is given), and the `hostname`',
    },
    ip: { type: 'string', description: 'the address to connect to, when it is not `fqdn`' },
    port: NUMBER_OR_DIGITS('the MySQL port; 3306 when left out'),
    login: { type: 'string', description: 'the MySQL user' },
    password: {
      type: 'string',
      description:
        "that user's password: compared with the one stored (opened), sealed, never stored in clear or answered",
    },
    tag: TAGS,
    organization: {
      type: 'string',
      description: 'the client, by its libelle: found or created; client 99 for a new server when left out',
    },
    environment: {
      type: 'string',
      description: 'the environment, by its libelle or key: found or created; required for a new server',
    },
    ssh_ip: { type: 'string', description: 'the address SSH goes to (`ssh_nat`), when it is not `ip`' },
    ssh_port: NUMBER_OR_DIGITS('the SSH port'),
    ssh_login: { type: 'string', description: 'the SSH user' },
    display_name: {
      type: 'string',
      description: 'the name shown to people; `@hostname` (PmaControl reads it from the server) is taken as left out',
    },
    database: { type: 'string', description: 'the database to connect to' },
    is_monitored: FLAG('PmaControl polls this server'),
    is_proxy: FLAG('the address is a proxy in front of servers'),
    is_vip: FLAG('the address is a virtual IP'),
    is_ssl: FLAG('connect over TLS'),
  },
  additionalProperties: false,
};

const HAPROXY_ITEM: SchemaObject = {
  type: 'object',
  description:
    'An HAProxy front: read and listed as ignored (this service has no resource for HAProxy statistics pages)',
  properties: {
    fqdn: { type: 'string', description: 'the address of the front' },
    ip: { type: 'string', description: 'its address, when it is not `fqdn`' },
    port: NUMBER_OR_DIGITS('the port'),
    tag: TAGS,
    organization: { type: 'string', description: 'the client, by its libelle' },
    environment: { type: 'string', description: 'the environment, by its libelle or key' },
    display_name: { type: 'string', description: 'the name shown to people' },
    stats: { type: 'object', description: 'the statistics page: path, port, login, password (never kept)' },
  },
  additionalProperties: false,
};

const PUSH_REQUEST: SchemaObject = {
  type: 'object',
  properties: {
    mysql: { type: 'array', items: MYSQL_ITEM, description: 'the servers to register or update' },
    haproxy: { type: 'array', items: HAPROXY_ITEM, description: 'HAProxy fronts: read, listed as ignored' },
  },
  additionalProperties: false,
};

const ITEM: SchemaObject = {
  type: 'object',
  properties: {
    index: { type: 'integer', minimum: 0, description: "the item's place in its list" },
    server: { type: 'string', description: 'the address the item names, `fqdn:port`' },
    id: { type: 'integer', minimum: 1, description: "the server's id" },
  },
  required: ['index', 'server'],
  additionalProperties: false,
};
const ITEMS = (description: string): SchemaObject => ({ type: 'array', items: ITEM, description });

const PUSH_ANSWER: SchemaObject = {
  type: 'object',
  properties: {
    authenticate: {
      type: 'boolean',
      const: true,
      description: "the caller's token was accepted (PmaControl's answer has it)",
    },
    mysql: {
      type: 'object',
      description: 'the `mysql` items by outcome',
      properties: {
        inserted: ITEMS('servers created'),
        updated: ITEMS('servers changed'),
        unchanged: ITEMS('servers already as the item says: nothing recorded'),
        failed: ITEMS('items refused, each with its problems: nothing of them recorded'),
      },
      required: ['inserted', 'updated', 'unchanged', 'failed'],
      additionalProperties: false,
    },
    haproxy: {
      type: 'object',
      description: 'the `haproxy` items',
      properties: { ignored: ITEMS('read, not kept') },
      required: ['ignored'],
      additionalProperties: false,
    },
    problems: {
      type: 'array',
      description: 'why each failed item was refused: the field as sent (`mysql[3].port`), a code and a sentence',
      items: {
        type: 'object',
        properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
        required: ['field', 'code', 'message'],
        additionalProperties: false,
      },
    },
  },
  required: ['authenticate', 'mysql', 'haproxy', 'problems'],
  additionalProperties: false,
};

const PUSH_EXAMPLE_BODY = {
  mysql: [
    {
      fqdn: 'db-paris-01.example.net',
      port: '3306',
      login: 'pmacontrol',
      password: 'monitor-password',
      tag: ['galera', 'paris'],
      organization: 'ACME',
      environment: 'prod',
      ssh_port: '22',
    },
  ],
};

export function push(): OperationObject {
  return {
    tags: ['pmacontrol'],
    operationId: 'pushServers',
    summary: 'Push a whole inventory of servers: create what is missing, change what differs',
    description:
      "The body of PmaControl's webservice `pushServer`. Each `mysql` item is matched to a server by (`ip`, `port`) " +
      'and created or changed so that it says what the item says; its client, environment and tags are found by name ' +
      'or created. One append for the whole push: pushing the same inventory again records nothing. An item that is ' +
      'refused is listed in `failed` with its problems, and the others are applied (an item stands or falls with ' +
      'what it names). Tags are added, never taken away. The body and the credentials are never stored. Basic ' +
      'authentication, the token as the password, is taken as well as a bearer token.',
    parameters: [ref('parameters', 'XRequestId')],
    requestBody: { required: true, content: json(PUSH_REQUEST, PUSH_EXAMPLE_BODY) },
    responses: {
      200: {
        description: 'what was done with each item',
        headers: requestIdHeader,
        content: json(PUSH_ANSWER, {
          authenticate: true,
          mysql: {
            inserted: [{ index: 0, server: 'db-paris-01.example.net:3306', id: 12 }],
            updated: [],
            unchanged: [],
            failed: [],
          },
          haproxy: { ignored: [] },
          problems: [],
        }),
      },
      ...problems('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType', 'ValidationFailed'),
    },
  };
}

const HOSTVARS: SchemaObject = {
  type: 'object',
  properties: {
    ansible_host: { type: 'string', description: "the server's `ip`" },
    ansible_port: { type: 'integer', description: 'its `ssh_port`' },
    ansible_user: { type: 'string', description: 'its `ssh_login`, when set' },
    mysql_port: { type: 'integer', description: 'its MySQL `port`' },
    mysql_user: { type: 'string', description: 'its MySQL `login`' },
    pmacontrol_id: { type: 'integer', description: 'its id' },
    pmacontrol_id_client: { type: 'integer', description: 'the id of its client' },
    pmacontrol_id_environment: { type: 'integer', description: 'the id of its environment' },
    pmacontrol_tags: { type: 'array', items: { type: 'string' }, description: 'the names of its tags' },
    is_proxy: { type: 'boolean', description: 'the address is a proxy in front of servers' },
    is_vip: { type: 'boolean', description: 'the address is a virtual IP' },
  },
  required: [
    'ansible_host',
    'ansible_port',
    'mysql_port',
    'mysql_user',
    'pmacontrol_id',
    'pmacontrol_id_client',
    'pmacontrol_id_environment',
    'pmacontrol_tags',
    'is_proxy',
    'is_vip',
  ],
  additionalProperties: false,
};

const INVENTORY: SchemaObject = {
  type: 'object',
  properties: {
    _meta: {
      type: 'object',
      description: "each live server's variables, read by Ansible without calling the script per host",
      properties: { hostvars: { type: 'object', additionalProperties: HOSTVARS, description: 'by server name' } },
      required: ['hostvars'],
      additionalProperties: false,
    },
  },
  required: ['_meta'],
  additionalProperties: {
    type: 'object',
    description: 'a group: `client_<libelle>`, `env_<key>` or `tag_<name>`, its live servers by name',
    properties: { hosts: { type: 'array', items: { type: 'string' }, description: 'the names of its servers' } },
    required: ['hosts'],
    additionalProperties: false,
  },
};

export function ansibleInventory(): OperationObject {
  return {
    tags: ['pmacontrol'],
    operationId: 'getAnsibleInventory',
    summary: 'The live servers as an Ansible inventory',
    description:
      "Ansible's script-inventory JSON (what `ansible-inventory --list` prints): a group per client " +
      '(`client_<libelle>`), environment (`env_<key>`) and tag (`tag_<name>`), each name made of letters, digits and ' +
      "underscores (a name two entries would share gets each one's id); `_meta.hostvars` per live server, named by " +
      'its `name`. Soft-deleted servers are left out; no secret is in it.',
    parameters: [
      ref('parameters', 'XRequestId'),
      {
        name: 'at',
        in: 'query',
        required: false,
        description: 'an ISO 8601 date-time with an offset, or a position: the inventory as it was then',
        schema: { type: 'string' },
      },
    ],
    responses: {
      200: {
        description: 'the inventory',
        headers: requestIdHeader,
        content: json(INVENTORY, {
          _meta: {
            hostvars: {
              'db-paris-01': {
                ansible_host: '10.0.0.21',
                ansible_port: 22,
                ansible_user: 'admin',
                mysql_port: 3306,
                mysql_user: 'pmacontrol',
                pmacontrol_id: 1,
                pmacontrol_id_client: 99,
                pmacontrol_id_environment: 1,
                pmacontrol_tags: ['galera'],
                is_proxy: false,
                is_vip: false,
              },
            },
          },
          client_Default: { hosts: ['db-paris-01'] },
          env_prod: { hosts: ['db-paris-01'] },
          tag_galera: { hosts: ['db-paris-01'] },
        }),
      },
      ...problems('BadRequest'),
    },
  };
}

const STATUS: SchemaObject = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', description: "PMACONTROL_DB_URL is set: the service writes PmaControl's tables" },
    applying: {
      type: 'boolean',
      description: 'this instance holds the lease and writes them (one instance at a time)',
    },
    holder: { type: ['string', 'null'], description: 'the instance that holds the lease, as last read' },
    position: { type: 'integer', minimum: 0, description: 'the last position written into the tables (0: none yet)' },
    log_position: { type: 'integer', minimum: 0, description: "the position of the log's last event" },
    lag: { type: 'integer', minimum: 0, description: 'events not written into the tables yet' },
    applied_at: { type: ['string', 'null'], description: 'when the last batch was written (UTC)' },
    last_error: { type: ['string', 'null'], description: "the last error met writing PmaControl's database" },
    last_error_at: { type: ['string', 'null'], format: 'date-time', description: 'when it was met' },
    drift: {
      type: ['integer', 'null'],
      minimum: 0,
      description:
        'differences found by the last scheduled look for drift (PMACONTROL_DRIFT_INTERVAL_MS); null: none yet',
    },
    drift_checked_at: { type: ['string', 'null'], format: 'date-time', description: 'when that look was taken' },
  },
  required: [
    'enabled',
    'applying',
    'holder',
    'position',
    'log_position',
    'lag',
    'applied_at',
    'last_error',
    'last_error_at',
    'drift',
    'drift_checked_at',
  ],
  additionalProperties: false,
};

export function pmacontrolStatus(): OperationObject {
  return {
    tags: ['pmacontrol'],
    operationId: 'getPmaControlStatus',
    summary: "Where the writing into the monitoring platform's tables stands",
    description:
      "With PMACONTROL_DB_URL, the service writes every change into PmaControl's own tables, one transaction per " +
      'batch of events, and keeps the position applied in a table of its own there. This says how far it is, ' +
      'which instance writes, and the last error met (an outage of that database holds back nothing else).',
    parameters: [ref('parameters', 'XRequestId')],
    responses: {
      200: {
        description: 'the projection as this instance knows it',
        headers: requestIdHeader,
        content: json(STATUS, {
          enabled: true,
          applying: true,
          holder: 'db-admin-01:4242:9f1c2a3b',
          position: 1532,
          log_position: 1532,
          lag: 0,
          applied_at: '2026-11-28 09:55:11.123456',
          last_error: null,
          last_error_at: null,
          drift: 0,
          drift_checked_at: '2026-11-28T09:50:00.000Z',
        }),
      },
      ...problems('BadRequest'),
    },
  };
}
