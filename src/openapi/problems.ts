import type { ResponseObject } from 'openapi3-ts/oas31';
import type { JsonSchema } from '../domain/shared/fields.js';
import { problemType } from '../http/errors.js';

/** Every problem the API answers with: its status, code, description and example, as shared responses. */

export const problemProperties: Record<string, JsonSchema> = {
  type: { type: 'string' },
  title: { type: 'string' },
  status: { type: 'integer', minimum: 400, maximum: 599 },
  detail: { type: 'string' },
  code: { type: 'string' },
  error: { type: 'string', description: 'repeats detail, as PmaControl clients read it' },
};

export const problem = (extra: Record<string, JsonSchema> = {}, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties: { ...problemProperties, ...extra },
  required: [...Object.keys(problemProperties), ...required],
});

export const PROBLEMS: Record<
  string,
  { status: number; code: string; description: string; detail: string; schema?: string; extra?: object }
> = {
  BadRequest: {
    status: 400,
    code: 'invalid_json',
    description: 'invalid_json, invalid_id, invalid_query or invalid_header (a malformed Idempotency-Key)',
    detail: 'the body is not valid JSON',
  },
  Unauthorized: {
    status: 401,
    code: 'unauthorized',
    description:
      'a malformed, unknown, expired or revoked token (never a fall-back to anonymous), or no token where the anonymous role is none',
    detail: 'the token was revoked',
  },
  Forbidden: {
    status: 403,
    code: 'forbidden',
    description: "the caller's role is not enough; of an approval: self_approval, not_an_approver",
    detail: 'this needs the writer role; ci-reader has reader',
  },
  NotFound: {
    status: 404,
    code: 'not_found',
    description: 'unknown_resource, not_found, or deleted (hard-deleted entry)',
    detail: 'tags/42 does not exist',
  },
  Conflict: {
    status: 409,
    code: 'conflict',
    description:
      'conflict (uniqueness, taken id, or a request with the same Idempotency-Key still in flight), in_use (dependents listed), ' +
      'delete_guarded, or of an approval: already_voted, already_executed, not_open',
    detail: 'tag name "galera" is already used by id 3',
    schema: 'ConflictProblem',
    extra: { conflict: { resource: 'tags', id: 3, fields: ['name'] } },
  },
  PreconditionFailed: {
    status: 412,
    code: 'precondition_failed',
    description: 'If-Match does not match the current version; `stale`: an approval whose target changed since',
    detail: 'If-Match "2" does not match the current version "3"',
  },
  Gone: {
    status: 410,
    code: 'expired',
    description: 'an approval past its expiry (recorded as expired): ask again',
    detail: 'approval 12 expired at 2026-11-29T14:00:00.000Z',
  },
  PayloadTooLarge: {
    status: 413,
    code: 'payload_too_large',
    description: 'the body is over 1 MiB',
    detail: 'the body is over 1 MiB',
  },
  UnsupportedMediaType: {
    status: 415,
    code: 'unsupported_media_type',
    description: 'the body is not sent as JSON',
    detail: 'send JSON (application/json), not "text/plain"',
  },
  MisdirectedRequest: {
    status: 421,
    code: 'misdirected_request',
    description: 'the Host header names a host this service does not answer to (see ALLOWED_HOSTS)',
    detail: 'this service does not answer to the host "attacker.example"; add it to ALLOWED_HOSTS if it should',
  },
  ValidationFailed: {
    status: 422,
    code: 'validation_failed',
    description:
      'validation_failed (field errors, each with its field) or idempotency_key_reused (its error on the ' +
      'Idempotency-Key header)',
    detail: 'name: is required',
    schema: 'ValidationProblem',
  },
  Unavailable: {
    status: 503,
    code: 'unavailable',
    description:
      'the event store cannot be reached (nothing was written, unless the detail says the outcome is unknown), ' +
      'the stored change log is being rebuilt after damage was found in it, or a limit is reached (the live ' +
      'feed); Retry-After says when to try again',
    detail: 'the event store cannot be reached; nothing was written',
  },
};

export const requestIdHeader = {
  description: 'the request id, taken from the request or generated',
  schema: { type: 'string' as const },
};

export function problemResponse(name: string): ResponseObject {
  const p = PROBLEMS[name];
  const example: Record<string, unknown> = {
    type: problemType(p.code),
    title: name.replace(/([a-z])([A-Z])/g, '$1 $2'),
    status: p.status,
    detail: p.detail,
    code: p.code,
    error: p.detail,
  };
  Object.assign(example, p.extra);
  if (p.schema === 'ValidationProblem') example.errors = [{ field: 'name', code: 'required', message: 'is required' }];
  const challenge: Record<string, { $ref: string }> =
    p.status === 401 ? { 'WWW-Authenticate': { $ref: '#/components/headers/WWWAuthenticate' } } : {};
  return {
    description: p.description,
    headers: { 'X-Request-ID': { $ref: '#/components/headers/XRequestId' }, ...challenge },
    content: {
      'application/problem+json': { schema: { $ref: `#/components/schemas/${p.schema ?? 'Problem'}` }, example },
    },
  };
}
