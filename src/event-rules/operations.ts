import type { OperationObject, SchemaObject } from 'openapi3-ts/oas31';
import { answer, json, problems, query, ref } from '../openapi/operation-kit.js';
import { DELIVERY_STATES } from './ledger.js';

/** The operations of event rules' deliveries (section 15). */

const POSITION = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as SchemaObject;
const NULLABLE_TEXT = { type: ['string', 'null'] } as SchemaObject;
const TAGS = ['event-rules-delivery'];
const RULE_ID = { type: 'integer', minimum: 1, description: 'the event rule' } as SchemaObject;
const NEXT = { type: ['string', 'null'], description: 'the next page, null: none' } as SchemaObject;

const DELIVERY: SchemaObject = {
  type: 'object',
  properties: {
    rule: RULE_ID,
    position: { ...POSITION, description: 'the change delivered: its position in the log' },
    state: { type: 'string', enum: [...DELIVERY_STATES], description: 'where the delivery stands' },
    attempts: { type: 'integer', minimum: 0, description: 'POSTs made so far' },
    last_status: { type: ['integer', 'null'], description: "the receiver's last HTTP status, null: no answer" },
    last_error: { ...NULLABLE_TEXT, description: 'why the last attempt failed' },
    next_at: { ...NULLABLE_TEXT, description: 'when the next attempt is due (retrying, pending)' },
    first_at: { ...NULLABLE_TEXT, description: 'the first attempt: WEBHOOK_GIVE_UP_AFTER counts from it' },
  },
  required: ['rule', 'position', 'state', 'attempts', 'last_status', 'last_error', 'next_at', 'first_at'],
};
const EXAMPLE_DELIVERY = {
  rule: 3,
  position: 1207,
  state: 'retrying',
  attempts: 4,
  last_status: 503,
  last_error: 'answered 503',
  next_at: '2026-11-29T08:12:08.000Z',
  first_at: '2026-11-29T08:11:53.000Z',
};

const ruleParameter = ref('parameters', 'Id');

export function deliveries(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'listEventRuleDeliveries',
    summary: "A rule's deliveries, in log order",
    description:
      'Each change the rule matched and tried to send (a change being sent for the first time is not listed until ' +
      'its first attempt ends): `delivered` (2xx), `retrying` (the next attempt at `next_at`, back-off from 1 s ' +
      'doubling to 10 min), `dead` (given up after WEBHOOK_GIVE_UP_AFTER: the rule went on), `pending` (a ' +
      'redelivery asked for). Pages of `limit` (100 by default), `next` the following one. The latest 10,000 ' +
      'delivered ones of each rule are kept; every retrying, dead and pending one stays.',
    parameters: [
      ruleParameter,
      query('state', 'only deliveries in this state', { type: 'string', enum: [...DELIVERY_STATES] }),
      query('after', 'only deliveries of changes after this position', { type: 'integer', minimum: 0 }),
      query('limit', 'how many, 1 to 1000', { type: 'integer', minimum: 1, maximum: 1000 }),
    ],
    responses: {
      200: answer(
        'a page of deliveries',
        {
          type: 'object',
          properties: { items: { type: 'array', items: DELIVERY, description: 'in log order' }, next: NEXT },
          required: ['items', 'next'],
        },
        { items: [EXAMPLE_DELIVERY], next: null },
      ),
      ...problems('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'Unavailable'),
    },
  };
}

export function redeliver(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'redeliverEventRuleChange',
    summary: 'Send one change again',
    description:
      "The change at this position is sent again to the rule's target (with the same `webhook-id`), whether or " +
      'not it matched or was delivered before, by the instance that delivers, retried as any delivery is. It ' +
      'shows as `pending` until its first attempt ends.',
    parameters: [
      ruleParameter,
      {
        name: 'position',
        in: 'path',
        required: true,
        description: 'the position of the change',
        schema: POSITION,
        example: 1207,
      },
    ],
    responses: {
      202: answer(
        'the redelivery is asked for',
        {
          type: 'object',
          properties: {
            rule: RULE_ID,
            position: { ...POSITION, description: 'the change to send again' },
            state: { const: 'pending', description: 'until its first attempt ends' },
          },
          required: ['rule', 'position', 'state'],
        },
        { rule: 3, position: 1207, state: 'pending' },
      ),
      ...problems('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'Unavailable'),
    },
  };
}

export function replay(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'replayEventRule',
    summary: 'Send again every matching change from a position',
    description:
      "The rule's cursor moves to just before `from`: every change from there that matches the rule (as it is " +
      'now) is sent again, in log order, changes made before the rule was created included.',
    parameters: [ruleParameter],
    requestBody: {
      required: true,
      content: json(
        {
          type: 'object',
          properties: { from: { ...POSITION, description: 'the first position sent again' } },
          required: ['from'],
          additionalProperties: false,
        },
        { from: 1 },
      ),
    },
    responses: {
      202: answer(
        'the replay is asked for',
        {
          type: 'object',
          properties: {
            rule: RULE_ID,
            from: { ...POSITION, description: 'the first position sent again' },
            cursor: { type: 'integer', minimum: 0, description: "the rule's cursor now: from − 1" },
          },
          required: ['rule', 'from', 'cursor'],
        },
        { rule: 3, from: 1, cursor: 0 },
      ),
      ...problems(
        'BadRequest',
        'Unauthorized',
        'Forbidden',
        'NotFound',
        'UnsupportedMediaType',
        'ValidationFailed',
        'Unavailable',
      ),
    },
  };
}

const STATUS: SchemaObject = {
  type: 'object',
  properties: {
    rule: RULE_ID,
    name: { type: 'string', description: "the rule's name" },
    enabled: { type: 'boolean', description: 'whether it sends' },
    cursor: {
      type: ['integer', 'null'],
      description: 'every matching change up to this position is delivered or dead; null: not started',
    },
    head: { type: 'integer', description: 'the position of the last event this instance folded' },
    lag: { type: ['integer', 'null'], description: 'events of the log after the cursor' },
    last_error: { ...NULLABLE_TEXT, description: 'why the last failed attempt failed' },
    last_error_at: { ...NULLABLE_TEXT, description: 'when (ISO 8601)' },
    delivering: { ...NULLABLE_TEXT, description: 'the instance that holds the lease, if any' },
    this_instance: { type: 'boolean', description: 'whether that is the instance answering' },
  },
};
STATUS.required = Object.keys(STATUS.properties!);

const EXAMPLE_STATUS = {
  rule: 3,
  name: 'prod-monitoring-off',
  enabled: true,
  cursor: 1206,
  head: 1290,
  lag: 84,
  last_error: 'answered 503',
  last_error_at: '2026-11-29T08:11:54.000Z',
  delivering: 'db-config-1/4121/5f3a9c21',
  this_instance: true,
};

export function status(): OperationObject {
  return {
    tags: TAGS,
    operationId: 'getEventRuleStatus',
    summary: "A rule's cursor, lag and last error",
    description:
      '`cursor`: every matching change up to this position is delivered or dead (null: the rule has not been ' +
      'delivered by any instance yet); `lag`: events of the log after it; `delivering`: the instance that holds ' +
      'the lease, if any; `this_instance`: whether that is the instance answering.',
    parameters: [ruleParameter],
    responses: {
      200: answer('the status', STATUS, EXAMPLE_STATUS),
      ...problems('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'Unavailable'),
    },
  };
}
