import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { json, problems, ref, requestIdHeader } from '../openapi/operation-kit.js';
import { PUSH_BOUNDS } from './push-request.js';

/** The OpenAPI operation of PmaControl's push: its body and answer, written out member by member. */

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
const LINES = (description: string): SchemaObject => ({ type: 'array', items: { type: 'string' }, description });

const PUSH_ANSWER: SchemaObject = {
  type: 'object',
  description:
    "What PmaControl's `pushServer` answers, so that a script written for it works unchanged, and this " +
    "service's own detail beside it, under `details`.",
  properties: {
    authenticate: {
      type: 'string',
      const: 'ok',
      description: 'the credentials were accepted (a refusal is a 401, before any of this)',
    },
    mysql: {
      type: 'object',
      description: 'the `mysql` items by outcome, as PmaControl words them: `<display_name> (<hostname>:<port>)`',
      properties: {
        inserted: LINES('servers created'),
        updated: LINES('servers changed'),
        failed: LINES('items refused, with why: nothing of them recorded'),
      },
      required: ['inserted', 'updated', 'failed'],
      additionalProperties: false,
    },
    error: LINES('every problem, as `<field as sent>: <why>` (`mysql[3].port: must be …`)'),
    details: {
      type: 'object',
      description: "this service's detail: each item with its place in the list and the server's id, by outcome",
      properties: {
        inserted: ITEMS('servers created'),
        updated: ITEMS('servers changed'),
        unchanged: ITEMS('servers already as the item says: nothing recorded'),
        failed: ITEMS('items refused, each with its problems: nothing of them recorded'),
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
      required: ['inserted', 'updated', 'unchanged', 'failed', 'haproxy', 'problems'],
      additionalProperties: false,
    },
  },
  required: ['authenticate', 'mysql', 'error', 'details'],
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
      "what it names). Tags are added, never taken away. Where an item is silent, a new server gets PmaControl's " +
      "defaults (`ssh_login` `root`) and a new tag PmaControl's colour for its name. The answer is PmaControl's " +
      "(`authenticate`, `mysql.inserted`/`updated` as its strings, `error`), this service's detail under " +
      '`details`. The body and the credentials are never stored. Basic authentication is taken as well as a bearer ' +
      "token: the token as the password, or, with PmaControl's database configured, the user and password of one " +
      'of its enabled `webservice_user` rows (actor `pmacontrol:<user>`). A body is bounded: at most ' +
      `${PUSH_BOUNDS.bytes / (1024 * 1024)} MiB, ${PUSH_BOUNDS.values} JSON values and ${PUSH_BOUNDS.depth} levels ` +
      '(413 as soon as it is past them, read as a stream); text fields take strings only (a number is a 422: ' +
      'it would not be kept as written); a body that is not UTF-8 is a 400.',
    parameters: [ref('parameters', 'XRequestId')],
    requestBody: { required: true, content: json(PUSH_REQUEST, PUSH_EXAMPLE_BODY) },
    responses: {
      200: {
        description: 'what was done with each item',
        headers: requestIdHeader,
        content: json(PUSH_ANSWER, {
          authenticate: 'ok',
          mysql: { inserted: ['db-paris-01.example.net (db-paris-01.example.net:3306)'], updated: [], failed: [] },
          error: [],
          details: {
            inserted: [{ index: 0, server: 'db-paris-01.example.net:3306', id: 12 }],
            updated: [],
            unchanged: [],
            failed: [],
            haproxy: { ignored: [] },
            problems: [],
          },
        }),
      },
      ...problems('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType', 'ValidationFailed'),
    },
  };
}
