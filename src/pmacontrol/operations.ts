import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { json, problems, ref, requestIdHeader } from '../openapi/operation-kit.js';

/** The OpenAPI operations of the Ansible inventory and of the projection's status. */

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
    applied_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'when the last batch was written (ISO 8601, UTC, microseconds)',
    },
    last_error: { type: ['string', 'null'], description: "the last error met writing PmaControl's database" },
    last_error_at: { type: ['string', 'null'], format: 'date-time', description: 'when it was met' },
    blocked: {
      type: ['string', 'null'],
      description:
        "why the next batch cannot be written as PmaControl's tables are (a row this service did not write, a " +
        'unique value another row holds, a value a column cannot hold); null when it can. It is tried again, ' +
        'never skipped, and /readyz answers not ready meanwhile (saying the tables cannot take the next batch, not ' +
        'which rows: it is open to anyone)',
    },
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
    'blocked',
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
          applied_at: '2026-11-28T09:55:11.123456Z',
          last_error: null,
          last_error_at: null,
          blocked: null,
          drift: 0,
          drift_checked_at: '2026-11-28T09:50:00.000Z',
        }),
      },
      ...problems('BadRequest'),
    },
  };
}
