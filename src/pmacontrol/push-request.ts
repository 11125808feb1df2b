import type { FieldError } from '../domain/shared/errors.js';
import { ValidationFailed } from '../domain/shared/errors.js';

/**
 * PmaControl's push body (its webservice `pushServer`) read: a JSON inventory of `mysql` and
 * `haproxy` items, each value as the service's field takes it (numbers may come as strings, as
 * PmaControl's own sample sends them), every problem collected. push.ts decides what is read.
 */

/** One `mysql` item, read: every value as the service's field takes it; absent values are left as they are. */
export interface PushServer {
  index: number;
  /** Where a problem of the item is reported: `mysql[3]`. */
  path: string;
  ip: string;
  port: number;
  hostname?: string;
  login?: string;
  password?: string;
  tags: string[];
  organization?: string;
  environment?: string;
  ssh_nat?: string;
  ssh_port?: number;
  ssh_login?: string;
  display_name?: string;
  database?: string;
  is_monitored?: boolean;
  is_proxy?: boolean;
  is_vip?: boolean;
  is_ssl?: boolean;
}

/** A push read: the servers to decide, the `haproxy` items (taken, not kept) and the items that could not be read. */
export interface PushRequest {
  servers: PushServer[];
  proxies: { index: number; server: string }[];
  problems: FieldError[];
  /** `mysql` items that could not be read, reported as failed. */
  unread: { index: number; server: string }[];
}

export type Body = Record<string, unknown>;

/**
 * How much a push may hold: 10,000 servers take about 3 MB and 150,000 values; a body of millions of
 * tiny values is refused as soon as it is past these (bench/pmacontrol.ts, the junk push).
 */
export const PUSH_BOUNDS = { bytes: 16 * 1024 * 1024, values: 400_000, depth: 8 } as const;

const MYSQL_KEYS = new Set([
  'fqdn',
  'ip',
  'port',
  'login',
  'password',
  'tag',
  'organization',
  'environment',
  'ssh_ip',
  'ssh_port',
  'ssh_login',
  'display_name',
  'database',
  'is_monitored',
  'is_proxy',
  'is_vip',
  'is_ssl',
]);
const HAPROXY_KEYS = new Set(['fqdn', 'ip', 'port', 'tag', 'organization', 'environment', 'stats', 'display_name']);

/** PmaControl's `display_name` that asks it to read `@@hostname` from the server: not done here. */
const READ_FROM_SERVER = '@hostname';

const problem = (field: string, code: string, message: string): FieldError => ({ field, code, message });
const isObject = (value: unknown): value is Body =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Reads the values of one item, each as its field takes it, collecting every problem. */
class ItemReader {
  readonly problems: FieldError[] = [];

  constructor(
    private readonly body: Body,
    private readonly path: string,
  ) {}

  private fail(key: string, code: string, message: string): undefined {
    this.problems.push(problem(`${this.path}.${key}`, code, message));
    return undefined;
  }

  /** A string; a number is refused: it would not be kept as written (`1e400` is Infinity, `0.10` is 0.1). */
  text(key: string): string | undefined {
    const value = this.body[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number') {
      return this.fail(key, 'invalid_type', 'must be a string: a number is not kept as it was written; quote it');
    }
    if (typeof value !== 'string') return this.fail(key, 'invalid_type', 'must be a string');
    return value;
  }

  /** An integer, also sent as a string of digits (`"3306"`). */
  integer(key: string, min: number, max: number): number | undefined {
    const value = this.body[key];
    if (value === undefined || value === null || value === '') return undefined;
    const number = typeof value === 'string' && /^\d{1,10}$/.test(value.trim()) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > max) {
      return this.fail(key, 'invalid_value', `must be an integer from ${min} to ${max}`);
    }
    return number;
  }

  /** true/false, 1/0 or "1"/"0", as PmaControl's flags come. */
  flag(key: string): boolean | undefined {
    const value = this.body[key];
    if (value === undefined || value === null) return undefined;
    if (value === true || value === 1 || value === '1' || value === 'true') return true;
    if (value === false || value === 0 || value === '0' || value === 'false') return false;
    return this.fail(key, 'invalid_value', 'must be true or false (1 or 0)');
  }

  /** A list of tag names, or one string of names separated by commas, as PmaControl takes them. */
  tags(key: string): string[] {
    const value = this.body[key];
    if (value === undefined || value === null || value === '') return [];
    const list = typeof value === 'string' ? value.split(',') : value;
    if (!Array.isArray(list) || list.some((name) => typeof name !== 'string')) {
      this.fail(key, 'invalid_type', 'must be a list of tag names, or names separated by commas');
      return [];
    }
    const names = list.map((name: string) => name.trim()).filter((name) => name !== '');
    return [...new Map(names.map((name) => [name.toLowerCase(), name])).values()];
  }

  unknown(known: Set<string>): void {
    for (const key of Object.keys(this.body)) {
      if (!known.has(key)) this.fail(key, 'unknown_field', 'is not a field of a push item');
    }
  }
}

/** The address an item names, for the answer: `fqdn:port` as sent. */
const addressOf = (body: Body) => `${String(body.fqdn ?? body.ip ?? '?')}:${String(body.port ?? 3306)}`;

function readServer(body: Body, index: number): { server?: PushServer; problems: FieldError[] } {
  const path = `mysql[${index}]`;
  const read = new ItemReader(body, path);
  read.unknown(MYSQL_KEYS);
  const fqdn = read.text('fqdn')?.trim();
  const ip = read.text('ip')?.trim() || fqdn;
  if (!ip) read.problems.push(problem(`${path}.fqdn`, 'required', 'is required (or ip)'));
  const sshIp = read.text('ssh_ip')?.trim();
  const displayName = read.text('display_name')?.trim();
  const server: PushServer = {
    index,
    path,
    ip: ip ?? '',
    port: read.integer('port', 1, 65535) ?? 3306,
    hostname: fqdn,
    login: read.text('login'),
    password: read.text('password'),
    tags: read.tags('tag'),
    organization: read.text('organization')?.trim() || undefined,
    environment: read.text('environment')?.trim() || undefined,
    // SSH goes to `ip` unless the item names another address.
    ssh_nat: sshIp === undefined ? undefined : sshIp === ip ? '' : sshIp,
    ssh_port: read.integer('ssh_port', 1, 65535),
    ssh_login: read.text('ssh_login')?.trim(),
    display_name: displayName && displayName !== READ_FROM_SERVER ? displayName : undefined,
    database: read.text('database')?.trim(),
    is_monitored: read.flag('is_monitored'),
    is_proxy: read.flag('is_proxy'),
    is_vip: read.flag('is_vip'),
    is_ssl: read.flag('is_ssl'),
  };
  return read.problems.length > 0 ? { problems: read.problems } : { server, problems: [] };
}

/**
 * Reads a push body. A body that is not a push at all (no list where one is expected, an unknown
 * member) is refused whole (422); an item that cannot be read is listed as failed, the others go on.
 */
export function readPush(body: Body): PushRequest {
  const problems: FieldError[] = [];
  for (const key of Object.keys(body)) {
    if (key !== 'mysql' && key !== 'haproxy') problems.push(problem(key, 'unknown_field', 'is not a list of a push'));
  }
  for (const key of ['mysql', 'haproxy']) {
    if (body[key] !== undefined && !Array.isArray(body[key]))
      problems.push(problem(key, 'invalid_type', 'must be a list'));
  }
  if (problems.length > 0) throw new ValidationFailed(problems);
  const request: PushRequest = { servers: [], proxies: [], problems: [], unread: [] };
  ((body.mysql as unknown[] | undefined) ?? []).forEach((item, index) => {
    if (!isObject(item)) {
      request.problems.push(problem(`mysql[${index}]`, 'invalid_type', 'must be an object'));
      request.unread.push({ index, server: '?' });
      return;
    }
    const { server, problems: found } = readServer(item, index);
    if (server) request.servers.push(server);
    else {
      request.problems.push(...found);
      request.unread.push({ index, server: addressOf(item) });
    }
  });
  ((body.haproxy as unknown[] | undefined) ?? []).forEach((item, index) => {
    const path = `haproxy[${index}]`;
    if (!isObject(item)) {
      request.problems.push(problem(path, 'invalid_type', 'must be an object'));
      return;
    }
    const read = new ItemReader(item, path);
    read.unknown(HAPROXY_KEYS);
    if (read.problems.length > 0) request.problems.push(...read.problems);
    else request.proxies.push({ index, server: addressOf(item) });
  });
  return request;
}
