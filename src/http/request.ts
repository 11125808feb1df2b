import type { Context } from 'koa';
import type { Moment } from '../application/changes.js';
import type { ListQuery } from '../application/queries.js';
import type { Resource } from '../domain/shared/declaration.js';
import type { JsonSchema } from '../domain/shared/fields.js';
import { type ExpectedVersion, MAX_ID } from '../domain/shared/types.js';
import { listParameters, searchedFields } from '../schemas/list-filters.js';
import { invalidId, invalidQuery, RequestError } from './errors.js';
import { parseMoment } from './moments.js';

/** An id as a URL or an entity tag writes it: decimal, no sign, no leading zero (at most MAX_ID once read). */
export const ID_PATTERN = '[1-9][0-9]{0,15}';
const ID = new RegExp(`^${ID_PATTERN}$`);

/** Whether `raw` is an id as the API writes it, 1 … 2^53 − 1. */
export const isCanonicalId = (raw: string): boolean => ID.test(raw) && Number(raw) <= MAX_ID;

/** `{id}`: decimal, no sign, no leading zero, 1 … 2^53 − 1. */
export function parseId(raw: string): number {
  if (!isCanonicalId(raw)) throw invalidId(raw);
  return Number(raw);
}

/** The query parameters a route takes, each at most once; any other, or one given twice, is a 400. */
export function singleParameters(ctx: Context, allowed: readonly string[]): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.query)) {
    if (!allowed.includes(name)) throw invalidQuery(`unknown query parameter "${name.slice(0, 40)}"`);
    if (typeof value !== 'string') throw invalidQuery(`query parameter "${name}" is given more than once`);
    found[name] = value;
  }
  return found;
}

/** For routes that take no query parameter at all. */
export function refuseQuery(ctx: Context): void {
  const [name] = Object.keys(ctx.query);
  if (name !== undefined) throw invalidQuery(`unknown query parameter "${name.slice(0, 40)}"`);
}

const ENTITY_TAG = /^(W\/)?"([^"]*)"$/;

/**
 * `If-Match` (RFC 9110) as the versions a write accepts: `*`, or a list of entity tags `"<version>"`
 * (weak tags compare equal). A value that is not an entity tag is a 412 that says how to quote it.
 */
export function expectedVersion(header: string): ExpectedVersion | undefined {
  if (header === '') return undefined;
  if (header.trim() === '*') return 'any';
  const versions: number[] = [];
  for (const part of header.split(',').map((p) => p.trim())) {
    const tag = ENTITY_TAG.exec(part);
    if (!tag) {
      throw new RequestError(
        412,
        'precondition_failed',
        `If-Match must hold entity tags in double quotes, as the ETag header gives them: If-Match: "${part.replace(/"/g, '').slice(0, 20)}"`,
      );
    }
    // A tag that is no version of ours can never match: it stays out, and the write gets its 412.
    if (ID.test(tag[2])) versions.push(Number(tag[2]));
  }
  return versions;
}

const sortable = (resource: Resource) => [
  'id',
  ...resource.shownFields.filter((name) => resource.declaration.fields[name].schema.type !== 'array'),
  ...(resource.declaration.deletion === 'soft' ? ['is_deleted'] : []),
  'version',
  'created_at',
  'updated_at',
];

function parseValue(name: string, raw: string, schema: JsonSchema): unknown {
  const types = ([] as unknown[]).concat(schema.type);
  if (types.includes('null') && raw === 'null') return null;
  if (types.includes('boolean')) {
    const booleans: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };
    if (!Object.hasOwn(booleans, raw)) throw invalidQuery(`query parameter "${name}" must be true or false`);
    return booleans[raw];
  }
  if (types.includes('integer')) {
    const min = (schema.minimum as number | undefined) ?? 0;
    if (!/^(0|[1-9][0-9]{0,15})$/.test(raw) || Number(raw) < min || Number(raw) > MAX_ID) {
      throw invalidQuery(`query parameter "${name}" must be an integer ≥ ${min}`);
    }
    return Number(raw);
  }
  if (raw.length > 1000) throw invalidQuery(`query parameter "${name}" is too long`);
  return raw;
}

const count = (name: string, raw: string, min: number) =>
  parseValue(name, raw, { type: 'integer', minimum: min }) as number;

function parseSort(resource: Resource, raw: string): ListQuery['sort'] {
  const allowed = sortable(resource);
  return raw.split(',').map((part) => {
    const descending = part.startsWith('-');
    const field = descending ? part.slice(1) : part;
    if (!allowed.includes(field)) throw invalidQuery(`cannot sort ${resource.name} by "${field.slice(0, 40)}"`);
    return { field, descending };
  });
}

/**
 * List query parameters (and `at`, for a list as it was then); an unknown one, or one given twice
 * that cannot be, is a 400.
 */
export function parseListQuery(ctx: Context, resource: Resource): { query: ListQuery; at?: Moment } {
  const params = listParameters(resource);
  const query: ListQuery = { equals: [], holds: [], sort: [], offset: 0 };
  let at: Moment | undefined;
  for (const [name, given] of Object.entries(ctx.query)) {
    const values = ([] as string[]).concat(given ?? []);
    const single = () => {
      if (values.length > 1) throw invalidQuery(`query parameter "${name}" is given more than once`);
      return values[0];
    };
    if (name === 'at') at = parseMoment('at', single());
    else if (name === 'limit') query.limit = count(name, single(), 1);
    else if (name === 'offset') query.offset = count(name, single(), 0);
    else if (name === 'sort') query.sort = parseSort(resource, single());
    else if (name === 'q') query.q = { text: single(), searched: searchedFields(resource) };
    else if (!Object.hasOwn(params, name)) throw invalidQuery(`unknown query parameter "${name.slice(0, 40)}"`);
    else if (isMembership(resource, name)) {
      query.holds.push({
        field: membershipField(resource, name),
        ids: values.map((v) => parseValue(name, v, params[name]) as number),
      });
    } else query.equals.push({ field: name, values: values.map((v) => parseValue(name, v, params[name])) });
  }
  return { query, ...(at ? { at } : {}) };
}

/** For a single entry: only `at` (the entry as it was then). */
export function parseReadQuery(ctx: Context): Moment | undefined {
  const { at } = singleParameters(ctx, ['at']);
  return at === undefined ? undefined : parseMoment('at', at);
}

const membershipField = (resource: Resource, param: string) =>
  Object.entries(resource.declaration.fields).find(([, spec]) => spec.filterAs === param)![0];

const isMembership = (resource: Resource, param: string) =>
  Object.values(resource.declaration.fields).some((spec) => spec.filterAs === param);
