import type { Context } from 'koa';
import type { JsonSchema } from '../schemas/fields.js';
import { MAX_ID, own } from '../schemas/fields.js';
import { invalidId, invalidQuery } from './errors.js';

/** `{id}`: decimal, no sign, no leading zero, 1 … 2^53 − 1. */
export function parseId(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || Number(raw) > MAX_ID) throw invalidId(raw);
  return Number(raw);
}

export type ListQuery = { filters: Record<string, number | boolean>; limit?: number; offset: number };

const PAGE = { limit: { type: 'integer', minimum: 1 }, offset: { type: 'integer', minimum: 0 } } as const;

/** Query parameters: each known one at most once and well-formed; anything else is a 400. */
export function parseQuery(ctx: Context, allowed: Record<string, JsonSchema> = {}): ListQuery {
  const query: ListQuery = { filters: {}, offset: 0 };
  const known: Record<string, JsonSchema> = { ...allowed, ...PAGE };
  for (const [name, value] of Object.entries(ctx.query)) {
    const schema = own(known, name);
    if (!schema) throw invalidQuery(`unknown query parameter "${name.slice(0, 40)}"`);
    if (typeof value !== 'string') throw invalidQuery(`query parameter "${name}" is given more than once`);
    const parsed =
      schema.type === 'boolean' ? parseBoolean(value) : parseInteger(value, (schema.minimum as number) ?? 0);
    if (parsed === undefined)
      throw invalidQuery(
        `query parameter "${name}" must be ${schema.type === 'boolean' ? 'true or false' : `an integer ≥ ${schema.minimum}`}`,
      );
    if (name === 'limit') query.limit = parsed as number;
    else if (name === 'offset') query.offset = parsed as number;
    else query.filters[name] = parsed;
  }
  return query;
}

/** For routes that take no query parameter at all. */
export function refuseQuery(ctx: Context): void {
  const [name] = Object.keys(ctx.query);
  if (name !== undefined) throw invalidQuery(`unknown query parameter "${name.slice(0, 40)}"`);
}

const parseBoolean = (value: string) => own<boolean>({ true: true, false: false, '1': true, '0': false }, value);
const parseInteger = (value: string, minimum: number) =>
  /^(0|[1-9][0-9]{0,15})$/.test(value) && Number(value) >= minimum && Number(value) <= MAX_ID
    ? Number(value)
    : undefined;
