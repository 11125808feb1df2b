import { isIP } from 'node:net';
import { MAX_ID } from '../domain/shared/types.js';

export { MAX_ID };

/** A JSON Schema object, as ajv and OpenAPI 3.1 both read it. */
export type JsonSchema = Record<string, unknown>;

export const text = (minLength: number, maxLength: number, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  minLength,
  maxLength,
  ...extra,
});
export const bool = (): JsonSchema => ({ type: 'boolean' });
export const integer = (minimum: number, maximum = MAX_ID): JsonSchema => ({ type: 'integer', minimum, maximum });
export const port = (): JsonSchema => integer(1, 65535);
export const ref = (target: string): JsonSchema => ({ ...integer(1), description: `id of an existing ${target}` });
export const color = (): JsonSchema => ({
  type: 'string',
  maxLength: 7,
  pattern: '^#[0-9A-Fa-f]{6}$',
  description: '#RRGGBB',
});
export const host = (maxLength: number): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength,
  format: 'host',
  description: 'an IPv4 or IPv6 address, or a host name (RFC 1123)',
});
export const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type, 'null'] });
export const timestamp = (): JsonSchema => ({ type: 'string', format: 'date-time' });

const HOSTNAME =
  /^(?=.{1,253}\.?$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;

/** The `host` format: an address or a host name. */
export const isHost = (value: string): boolean => isIP(value) !== 0 || HOSTNAME.test(value);

/** A lookup by a client-sent key that never reaches inherited members (`__proto__`, `constructor`, …). */
export const own = <T>(record: Record<string, T>, key: string): T | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;
