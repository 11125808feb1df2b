import type { ComponentsObject, SchemaObject } from 'openapi3-ts/oas31';
import type { JsonSchema } from '../domain/shared/fields.js';
import { MAX_ID } from '../domain/shared/types.js';
import { HELD_RESPONSE } from './approval.js';
import { PROBLEMS, problem, problemProperties, problemResponse, requestIdHeader } from './problems.js';

const integer = (minimum: number): JsonSchema => ({ type: 'integer', minimum, maximum: MAX_ID });
const timestamp = (): JsonSchema => ({ type: 'string', format: 'date-time' });

const SCHEMAS: Record<string, SchemaObject> = {
  Problem: problem() as SchemaObject,
  ValidationProblem: {
    ...problem({
      errors: {
        type: 'array',
        maxItems: 100,
        description: 'every invalid field, up to 100',
        items: {
          type: 'object',
          properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
          required: ['field', 'code', 'message'],
        },
      },
      error_count: { ...integer(101), description: 'how many problems there are in all, when more than 100' },
    }),
    description:
      'validation_failed lists the invalid fields in errors; idempotency_key_reused lists one, on the ' +
      'Idempotency-Key header',
    required: [...Object.keys(problemProperties), 'errors'],
  },
  ConflictProblem: problem({
    conflict: {
      type: 'object',
      description:
        'with code conflict on a unique value or a taken id: the entry that holds it, so that a client can ' +
        'change that entry instead (fields: the unique key, or ["id"])',
      properties: {
        resource: { type: 'string', description: 'the resource of the entry that holds the value' },
        id: { ...integer(1), description: 'its id' },
        fields: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          description: 'the fields of the unique key it holds, or ["id"]',
        },
      },
      required: ['resource', 'id', 'fields'],
    },
    dependents: {
      type: 'array',
      description: 'with code in_use: the entries that still reference this one',
      items: {
        type: 'object',
        properties: { resource: { type: 'string' }, id: integer(1) },
        required: ['resource', 'id'],
      },
    },
  }),
  HistoryItem: {
    type: 'object',
    properties: {
      position: { ...integer(1), description: "the event's place in the whole log" },
      revision: { ...integer(0), description: "the event's place in the entry's own stream (0: creation)" },
      type: { type: 'string', examples: ['TagCreated'] },
      at: timestamp(),
      actor: { type: 'string', description: 'anonymous without credentials, system for the initial entries' },
      request_id: { type: 'string' },
      data: { type: 'object', description: 'the values the event set; secrets appear as "[redacted]"' },
      diff: {
        type: 'array',
        description:
          "what the event changed in this entry, field by field (also when another entry's event changed it)",
        items: { $ref: '#/components/schemas/DiffMember' },
      },
      approval: {
        type: 'object',
        description: 'the event was caused by executing an approved request: the approval, who asked, who approved',
        properties: {
          id: { ...integer(1), description: "the approval's id" },
          requester: { type: 'string', description: 'who asked' },
          approvers: { type: 'array', items: { type: 'string' }, description: 'who approved, in order' },
        },
        required: ['id', 'requester', 'approvers'],
      },
    },
    required: ['position', 'revision', 'type', 'at', 'actor', 'request_id', 'data', 'diff'],
  },
  AsOf: {
    type: 'object',
    description: 'the moment a time-travel answer is given as of: the last event at or before the one asked for',
    properties: {
      position: { ...integer(0), description: 'the position of that event (0: before the first event)' },
      at: { type: ['string', 'null'], format: 'date-time', description: 'when it happened (null at position 0)' },
    },
    required: ['position', 'at'],
  },
  EffectItem: {
    type: 'object',
    description: 'an entry the event changed in passing (a server that lost a deleted tag), with its diff',
    properties: {
      resource: { type: 'string' },
      id: integer(1),
      revision: { ...integer(0), description: "the event's place in that entry's stream" },
      diff: { type: 'array', items: { $ref: '#/components/schemas/DiffMember' } },
    },
    required: ['resource', 'id', 'revision', 'diff'],
  },
  ChangeItem: {
    type: 'object',
    description:
      "one event of the change log: a history item of the event's entry, and the entries it changed in passing",
    properties: {
      position: { ...integer(1), description: "the event's place in the whole log" },
      revision: { type: ['integer', 'null'], minimum: 0, description: "its place in the entry's own stream" },
      type: { type: 'string', examples: ['ServerUpdated'] },
      at: timestamp(),
      actor: { type: 'string' },
      request_id: { type: 'string' },
      resource: { type: ['string', 'null'], description: 'the URL name of its entry (null: an event about no entry)' },
      id: { type: ['integer', 'null'], minimum: 1, description: "its entry's id" },
      data: { type: 'object', description: 'the values the event set; secrets appear as "[redacted]"' },
      diff: { type: 'array', items: { $ref: '#/components/schemas/DiffMember' } },
      effects: { type: 'array', items: { $ref: '#/components/schemas/EffectItem' } },
    },
    required: [
      'position',
      'revision',
      'type',
      'at',
      'actor',
      'request_id',
      'resource',
      'id',
      'data',
      'diff',
      'effects',
    ],
  },
  DiffMember: {
    type: 'object',
    description: 'one field an event set or changed; a secret shows as "[redacted]" on whichever side holds a value',
    properties: {
      field: { type: 'string' },
      before: { description: 'the value before the event; null before the creation' },
      after: { description: 'the value after the event; null after a hard delete' },
    },
    required: ['field', 'before', 'after'],
  },
};

const PARAMETERS: ComponentsObject['parameters'] = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'makes a retry safe: within 24 hours, the same key (per actor) with the same method, path and body gets the ' +
      'first answer again, byte for byte, with Idempotent-Replayed: true, and records nothing; with another method, ' +
      'path or body it is a 422 idempotency_key_reused; while the first is processed, a 409. Keys survive restarts ' +
      'and are honoured by every instance; a request that failed is not recorded.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  },
  Id: {
    name: 'id',
    in: 'path',
    required: true,
    description: `decimal integer from 1 to ${MAX_ID}, no sign or leading zero`,
    schema: integer(1),
  },
  ChangeSet: {
    name: 'Change-Set',
    in: 'header',
    required: false,
    description:
      'the id of an open change set: a write is staged in it (202), not applied; a read shows the configuration ' +
      'as the change set would leave it',
    schema: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
  },
  BreakGlassReason: {
    name: 'X-Break-Glass-Reason',
    in: 'header',
    required: false,
    description:
      'with a break-glass token (issued from the CLI only): why it passes the approval policies alone; the use ' +
      'is recorded (BreakGlassUsed)',
    schema: { type: 'string', minLength: 1, maxLength: 1000 },
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: 'the ETag of the version this write applies to (e.g. `"3"`); 412 otherwise',
    schema: { type: 'string' },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: '304 when it matches the current ETag (e.g. `"3"`)',
    schema: { type: 'string' },
  },
  XRequestId: {
    name: 'X-Request-ID',
    in: 'header',
    required: false,
    description:
      'echoed in the response and stored with the events; 1 to 200 characters of [A-Za-z0-9_.:@/+=-], ' +
      'else a UUID of version 7 (time-ordered) is generated',
    schema: { type: 'string' },
  },
};

const HEADERS: ComponentsObject['headers'] = {
  IdempotentReplayed: {
    description: 'true when this is the recorded answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  WWWAuthenticate: {
    description: 'the challenge: Bearer, and Basic where the route takes it',
    schema: { type: 'string' },
    example: 'Bearer realm="pmacontrol-config", error="invalid_token"',
  },
  XRequestId: requestIdHeader,
  ETag: { description: 'the entry version, quoted', schema: { type: 'string' }, example: '"1"' },
  Location: { description: 'the created entry', schema: { type: 'string' } },
};

export function sharedComponents(): ComponentsObject {
  const responses = {
    ...Object.fromEntries(Object.keys(PROBLEMS).map((name) => [name, problemResponse(name)])),
    Held: HELD_RESPONSE,
  };
  const securitySchemes: ComponentsObject['securitySchemes'] = {
    bearer: {
      type: 'http',
      scheme: 'bearer',
      description: 'a token issued by POST /fr/api/tokens or `pmacontrol-config token create`: pmc_ and 43 characters',
    },
    basic: {
      type: 'http',
      scheme: 'basic',
      description: 'only where an operation lists it (the push): any user name, and a token as the password',
    },
  };
  return structuredClone({ schemas: SCHEMAS, parameters: PARAMETERS, headers: HEADERS, responses, securitySchemes });
}
