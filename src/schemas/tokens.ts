import type { ValidateFunction } from 'ajv/dist/2020.js';
import { fieldError, ValidationFailed } from '../domain/shared/errors.js';
import { ROLES, type Role } from '../domain/tokens/resource.js';
import { createAjv, toFieldErrors } from './validator.js';

/** The body of POST /fr/api/tokens. */
export const TOKEN_REQUEST = {
  type: 'object',
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_.@-]+$',
      description: 'the actor of every event its requests cause; unique among live tokens',
    },
    role: { type: 'string', enum: [...ROLES], description: 'reader, writer or admin' },
    expires_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'when it stops working: an ISO 8601 date-time with an offset, in the future; null or absent: never',
    },
    secrets: { type: 'boolean', description: "may read servers' passwords and SSH private keys; default false" },
  },
  required: ['name', 'role'],
  additionalProperties: false,
};

export interface TokenRequest {
  name: string;
  role: Role;
  secrets: boolean;
  expiresAt: string | null;
}

let compiled: ValidateFunction | undefined;

export function parseTokenRequest(body: Record<string, unknown>, now: Date): TokenRequest {
  compiled ??= createAjv().compile(TOKEN_REQUEST);
  if (!compiled(body)) {
    throw new ValidationFailed(toFieldErrors(compiled.errors ?? []));
  }
  const expires = body.expires_at as string | null | undefined;
  if (expires != null && Date.parse(expires) <= now.getTime())
    throw fieldError('expires_at', 'in_the_past', 'must be in the future');
  return {
    name: body.name as string,
    role: body.role as Role,
    secrets: body.secrets === true,
    expiresAt: expires == null ? null : new Date(Date.parse(expires)).toISOString(),
  };
}
