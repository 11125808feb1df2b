import type { OperationObject } from 'openapi3-ts/oas31';
import type { Resource } from '../domain/shared/declaration.js';
import { ROLES } from '../domain/tokens/resource.js';
import { TOKEN_REQUEST } from '../schemas/tokens.js';
import { json, problems, ref, requestIdHeader } from './operation-kit.js';

export const TOKEN_SCHEMA = {
  type: 'object',
  description: 'a token as listed: never the token itself, never its digest',
  properties: {
    id: { type: 'integer', minimum: 1 },
    name: { type: 'string', description: 'the actor of every event its requests cause' },
    role: { type: 'string', enum: [...ROLES] },
    secrets: { type: 'boolean', description: "may read servers' passwords and SSH private keys" },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time', description: 'null: never' },
    revoked_at: { type: ['string', 'null'], format: 'date-time', description: 'null: live' },
    break_glass: {
      type: 'boolean',
      description:
        'may pass an approval policy alone with X-Break-Glass-Reason, each use recorded (issued from the CLI only)',
    },
  },
  required: ['id', 'name', 'role', 'secrets', 'break_glass', 'created_at', 'expires_at', 'revoked_at'],
  additionalProperties: false,
};

const TOKEN_EXAMPLE = {
  id: 3,
  name: 'ansible',
  role: 'writer',
  secrets: false,
  break_glass: false,
  created_at: '2026-11-23T09:00:00.000Z',
  expires_at: null,
  revoked_at: null,
};

export function whoami(): OperationObject {
  const schema = {
    type: 'object',
    properties: {
      actor: { type: 'string', description: "the token's name, or anonymous" },
      role: { type: 'string', enum: ['none', ...ROLES] },
      secrets: { type: 'boolean' },
    },
    required: ['actor', 'role', 'secrets'],
  };
  return {
    tags: ['identity'],
    operationId: 'whoami',
    summary: 'Who the service takes the caller for',
    description:
      'The actor its writes are recorded under, its role, and whether it may read secrets. Anyone may ask; a bad token is still a 401.',
    responses: {
      200: {
        description: 'the caller',
        headers: requestIdHeader,
        content: json(schema, { actor: 'ansible', role: 'writer', secrets: false }),
      },
      ...problems('BadRequest', 'Unauthorized'),
    },
  };
}

export function listTokens(): OperationObject {
  const schema = {
    type: 'object',
    properties: { items: { type: 'array', items: ref('schemas', 'Token') } },
    required: ['items'],
  };
  return {
    tags: ['identity'],
    operationId: 'listTokens',
    summary: 'Every token, revoked and expired ones included',
    description: 'Admin only. Never the tokens themselves, never their digests.',
    responses: {
      200: { description: 'the tokens', headers: requestIdHeader, content: json(schema, { items: [TOKEN_EXAMPLE] }) },
      ...problems('BadRequest'),
    },
  };
}

export function issueToken(): OperationObject {
  const schema = {
    type: 'object',
    properties: {
      token: { type: 'string', pattern: '^pmc_[A-Za-z0-9_-]{43}$', description: 'shown this once' },
      item: ref('schemas', 'Token'),
    },
    required: ['token', 'item'],
  };
  const example = { token: 'pmc_Vx3eYq0m2Qz9J8wK1bZ7c4R5tU6nH0aL2sD9fG1hJk8', item: TOKEN_EXAMPLE };
  return {
    tags: ['identity'],
    operationId: 'issueToken',
    summary: 'Issue a token',
    description:
      'Admin only; `secrets: true` only for a caller whose own token may read secrets (403 otherwise). The answer ' +
      'holds the token, shown this once: the service keeps only its sealed digest. Its name must be unique among ' +
      'live tokens. A repeat with the same `Idempotency-Key` is a 409 `conflict` naming the token issued: the ' +
      'token itself is kept nowhere, so it cannot be shown again.',
    parameters: [ref('parameters', 'IdempotencyKey')],
    requestBody: { required: true, content: json(TOKEN_REQUEST, { name: 'ansible', role: 'writer' }) },
    responses: {
      201: {
        description: 'issued',
        headers: { ...requestIdHeader, Location: ref('headers', 'Location') },
        content: json(schema, example),
      },
      ...problems(
        'BadRequest',
        'Conflict',
        'PayloadTooLarge',
        'UnsupportedMediaType',
        'ValidationFailed',
        'Unavailable',
      ),
    },
  };
}

export function revokeToken(): OperationObject {
  const schema = {
    type: 'object',
    properties: { id: { type: 'integer' }, revoked: { type: 'boolean', const: true } },
    required: ['id', 'revoked'],
  };
  return {
    tags: ['identity'],
    operationId: 'revokeToken',
    summary: 'Revoke a token',
    description:
      'Admin only. The token answers 401 from then on, on this instance at once and on every other as soon as it has followed the log. Revoking a revoked token changes nothing. An Idempotency-Key used before with another request is a 422 (idempotency_key_reused).',
    parameters: [ref('parameters', 'Id'), ref('parameters', 'IdempotencyKey')],
    responses: {
      200: { description: 'revoked', headers: requestIdHeader, content: json(schema, { id: 3, revoked: true }) },
      ...problems('BadRequest', 'NotFound', 'ValidationFailed', 'Unavailable'),
    },
  };
}

/** `GET /config/{resource}/{id}/secret`: every secret field the resource declares, in plain text. */
export function secretOperation(resource: Resource): OperationObject {
  const fields = resource.secretFields;
  const what = fields.map((field) => resource.declaration.fields[field].label ?? field).join(' and ');
  const schema = {
    type: 'object',
    properties: Object.fromEntries(
      fields.map((field) => [
        field,
        {
          type: ['string', 'null'],
          description: `the ${resource.declaration.fields[field].label ?? field} in plain text; null: none is set`,
        },
      ]),
    ),
    required: [...fields],
    additionalProperties: false,
  };
  const example = Object.fromEntries(fields.map((field) => [field, resource.declaration.fields[field].example]));
  return {
    tags: ['identity'],
    operationId: `get${resource.declaration.title}Secret`,
    summary: `The ${what} of one ${resource.declaration.label}, in plain text`,
    description:
      `For the monitoring platform: only a token issued with "secrets": true may call it (anyone else: 403, anonymous ` +
      `callers 401). Each call is first recorded in the log as a SecretRevealed event (the entry, the field and the ` +
      `actor, never the value), so the change log answers who read which ${what} and when. Never cached (no-store).`,
    parameters: [ref('parameters', 'Id')],
    responses: {
      200: { description: `the ${what}`, headers: requestIdHeader, content: json(schema, example) },
      ...problems('BadRequest', 'NotFound', 'Unavailable'),
    },
  };
}
