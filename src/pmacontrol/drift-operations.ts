import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { json, problems, ref, requestIdHeader } from '../openapi/operation-kit.js';

/** The operations on drift: PmaControl's tables changed outside this service. */

const ANY_VALUE = {
  description: 'the value (a secret: `[redacted]`); for a whole row, `"row"` or null where that side has none',
};

const ITEM: SchemaObject = {
  type: 'object',
  properties: {
    table: { type: 'string', description: "PmaControl's table", example: 'mysql_server' },
    id: { type: 'integer', minimum: 1, description: 'the row id, which is the entry id' },
    column: {
      type: ['string', 'null'],
      description: 'the field (the column of the same name; a list of ids: its link table); null: the whole row',
    },
    service: { ...ANY_VALUE, description: `this service's ${ANY_VALUE.description}` },
    pmacontrol: { ...ANY_VALUE, description: `PmaControl's ${ANY_VALUE.description}` },
  },
  required: ['table', 'id', 'column', 'service', 'pmacontrol'],
  additionalProperties: false,
};

const REPORT: SchemaObject = {
  type: 'object',
  properties: {
    position: { type: 'integer', minimum: 0, description: 'the position written into the tables when they were read' },
    checked_at: { type: 'string', format: 'date-time', description: 'when they were read' },
    items: { type: 'array', items: ITEM, description: 'every difference, by table and id' },
  },
  required: ['position', 'checked_at', 'items'],
  additionalProperties: false,
};

const SELECTION: SchemaObject = {
  description: 'every difference of the drift, or some of them, named as the drift lists them',
  oneOf: [
    {
      type: 'object',
      properties: { all: { type: 'boolean', const: true, description: 'every difference' } },
      required: ['all'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          minItems: 1,
          description: 'the differences chosen',
          items: {
            type: 'object',
            properties: {
              table: { type: 'string', description: "PmaControl's table" },
              id: { type: 'integer', description: 'the row id' },
              column: { type: ['string', 'null'], description: 'the column, or null for a whole row' },
            },
            required: ['table', 'id', 'column'],
            additionalProperties: false,
          },
        },
      },
      required: ['items'],
      additionalProperties: false,
    },
  ],
};

const EXAMPLE_ITEM = { table: 'mysql_server', id: 12, column: 'login', service: 'monitor', pmacontrol: 'pmacontrol' };
const UNCONFIGURED = 'a 404 when no PmaControl database is configured (PMACONTROL_DB_URL)';

export function pmacontrolDrift(): OperationObject {
  return {
    tags: ['pmacontrol'],
    operationId: 'getPmaControlDrift',
    summary: "Rows of the monitoring platform's tables changed outside this service",
    description:
      "PmaControl's tables read back as `import-pmacontrol` reads them and compared, field by field, with the " +
      'entries. Entries changed since the position written into the tables are not compared (that is lag, not ' +
      `drift). Secrets are compared by what they open to and shown as \`[redacted]\`; ${UNCONFIGURED}.`,
    parameters: [ref('parameters', 'XRequestId')],
    responses: {
      200: {
        description: 'the differences',
        headers: requestIdHeader,
        content: json(REPORT, { position: 1532, checked_at: '2026-11-28T09:55:11.000Z', items: [EXAMPLE_ITEM] }),
      },
      ...problems('BadRequest', 'NotFound'),
    },
  };
}

export function adoptDrift(): OperationObject {
  return {
    tags: ['pmacontrol'],
    operationId: 'adoptPmaControlDrift',
    summary: "Take the monitoring platform's values: record the chosen differences as changes",
    description:
      'Each chosen difference becomes a change with actor `pmacontrol`, all in one append or none: a row only ' +
      'PmaControl has is created with its id, an entry whose row PmaControl lost is deleted, columns are patched with ' +
      `PmaControl's values (checked as any write). A difference no longer in the drift is a 422; ${UNCONFIGURED}.`,
    parameters: [ref('parameters', 'XRequestId')],
    requestBody: {
      required: true,
      content: json(SELECTION, { items: [{ table: 'mysql_server', id: 12, column: 'login' }] }),
    },
    responses: {
      200: {
        description: 'what was recorded',
        headers: requestIdHeader,
        content: json(
          {
            type: 'object',
            properties: {
              adopted: { type: 'integer', minimum: 0, description: 'the differences taken' },
              events: { type: 'integer', minimum: 0, description: 'the events recorded' },
            },
            required: ['adopted', 'events'],
            additionalProperties: false,
          },
          { adopted: 1, events: 1 },
        ),
      },
      ...problems('BadRequest', 'NotFound', 'Conflict', 'UnsupportedMediaType', 'ValidationFailed'),
    },
  };
}

export function overwriteDrift(): OperationObject {
  return {
    tags: ['pmacontrol'],
    operationId: 'overwritePmaControlDrift',
    summary: "Put this service's values back into the monitoring platform's rows",
    description:
      'The rows of the chosen differences are written again as the configuration has them (a row the configuration ' +
      `does not have is deleted), in one transaction; nothing is recorded in the log. ${UNCONFIGURED}.`,
    parameters: [ref('parameters', 'XRequestId')],
    requestBody: { required: true, content: json(SELECTION, { all: true }) },
    responses: {
      200: {
        description: 'what was written',
        headers: requestIdHeader,
        content: json(
          {
            type: 'object',
            properties: { overwritten: { type: 'integer', minimum: 0, description: 'the differences put back' } },
            required: ['overwritten'],
            additionalProperties: false,
          },
          { overwritten: 1 },
        ),
      },
      ...problems('BadRequest', 'NotFound', 'UnsupportedMediaType', 'ValidationFailed'),
    },
  };
}
