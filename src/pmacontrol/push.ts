import { createHash } from 'node:crypto';
import type { ParseWrite } from '../application/service.js';
import type { DecidedBatch, WriteRequest } from '../application/writes.js';
import { FALLBACK_CLIENT_ID } from '../domain/clients/resource.js';
import type { ResourceName } from '../domain/resources.js';
import { type DomainError, type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { ConfigState } from '../domain/state.js';
import type { Body, PushRequest, PushServer } from './push-request.js';

/**
 * PmaControl's push decided (push-request.ts reads it): each server matched by (`ip`, `port`) and
 * created or changed so that it says what the item says; its client, environment and tags found by
 * name or created.
 */

/** An item in the answer: its place in the list, the address it names and, once written, the server's id. */
export interface PushedItem {
  index: number;
  server: string;
  id?: number;
  /** As PmaControl names a server it pushed: `<display_name> (<hostname>:<port>)`. */
  display?: string;
}

export interface PushOutcome {
  inserted: PushedItem[];
  updated: PushedItem[];
  unchanged: PushedItem[];
  failed: PushedItem[];
  problems: FieldError[];
}

/** Where the service's fields of a server come from in a push item, to report a problem where it was sent. */
const SENT_AS: Record<string, string> = {
  passwd: 'password',
  ip: 'fqdn',
  ssh_nat: 'ssh_ip',
  tags: 'tag',
  id_client: 'organization',
  id_environment: 'environment',
};

/** A refusal of one item, as problems at the item's fields (`mysql[3].password`). */
function itemProblems(item: PushServer, error: DomainError): FieldError[] {
  if (error instanceof ValidationFailed) {
    return error.errors.map((e) => ({ ...e, field: `${item.path}.${SENT_AS[e.field] ?? e.field}` }));
  }
  return [{ field: item.path, code: error.code, message: error.message }];
}

/** PmaControl's background for a tag it makes from a push: `#` and the first 6 hex digits of the name's MD5. */
const colourOf = (name: string) => `#${createHash('md5').update(name, 'utf8').digest('hex').slice(0, 6)}`;

/**
 * Decides a push on a batch: each server is one unit (its client, environment, tags and itself
 * stand or fall together); a refused item is listed with its problems and the others are applied.
 */
export class PushDecider {
  private readonly outcome: PushOutcome;

  constructor(
    private readonly batch: DecidedBatch,
    private readonly parse: ParseWrite,
    request: PushRequest,
  ) {
    this.outcome = {
      inserted: [],
      updated: [],
      unchanged: [],
      failed: [...request.unread],
      problems: [...request.problems],
    };
  }

  private get state(): ConfigState {
    return this.batch.state;
  }

  decide(servers: readonly PushServer[]): PushOutcome {
    for (const item of servers) {
      const server = `${item.hostname ?? item.ip}:${item.port}`;
      let result: { id: number; created: boolean; changed: boolean } | undefined;
      const refusal = this.batch.unit(() => {
        result = this.server(item);
      });
      if (refusal || !result) {
        this.outcome.failed.push({ index: item.index, server });
        if (refusal) this.outcome.problems.push(...itemProblems(item, refusal));
        continue;
      }
      const entry = this.state.collections.servers.get(result.id);
      const display = `${String(entry?.display_name)} (${String(entry?.hostname || entry?.ip)}:${String(entry?.port)})`;
      const done = { index: item.index, server, id: result.id, display };
      if (result.created) this.outcome.inserted.push(done);
      else if (result.changed) this.outcome.updated.push(done);
      else this.outcome.unchanged.push(done);
    }
    this.outcome.failed.sort((a, b) => a.index - b.index);
    return this.outcome;
  }

  /** The id of the entry holding `values` under the unique key made of exactly `values`' fields. */
  private holder(resource: ResourceName, values: Body): number | undefined {
    const fields = Object.keys(values);
    const same = (key: { fields: readonly string[] }) =>
      key.fields.length === fields.length && key.fields.every((f) => fields.includes(f));
    return this.state.collections[resource].conflict(values, 0, same)?.id;
  }

  /**
   * An entry found by its unique name, or created from `fields` as a POST would be; a refusal is
   * reported at `sentAs`, the item's field that named it.
   */
  private named(resource: ResourceName, key: Body, fields: Body, sentAs: string): number {
    const found = this.holder(resource, key);
    if (found !== undefined) return found;
    try {
      const input = this.parse(resource, 'create', { ...key, ...fields });
      return this.batch.apply({ kind: 'create', resource, input } as WriteRequest)[0]!.id;
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      const why = (e: FieldError) => ({
        ...e,
        field: sentAs,
        message: `${e.message} (${e.field} of a new ${resource} entry)`,
      });
      throw new ValidationFailed(error.errors.map(why));
    }
  }

  /** An environment by its name, then by its key (case-insensitive), or a new one named so. */
  private environment(name: string): number {
    const byName = this.holder('environments', { libelle: name });
    if (byName !== undefined) return byName;
    const lower = name.toLowerCase();
    for (const env of this.state.collections.environments.values()) {
      if (String(env.key).toLowerCase() === lower) return env.id;
    }
    const key = name.replace(/\s+/g, '').toLowerCase().slice(0, 13);
    const fields = { key, class: 'info', letter: name.slice(0, 1).toUpperCase() };
    return this.named('environments', { libelle: name }, fields, 'environment');
  }

  /**
   * A name no server has yet, from its address: the host alone on MySQL's default port, else
   * `host-port`; then `host-port-2`, `host-port-3`… (PmaControl makes a new random name on every push).
   */
  private newName(item: PushServer): string {
    const host = (item.hostname ?? item.ip).slice(0, 88);
    const withPort = `${host}-${item.port}`;
    const free = (name: string) => this.holder('servers', { name }) === undefined;
    if (item.port === 3306 && free(host)) return host;
    let name = withPort;
    for (let n = 2; !free(name); n++) name = `${withPort}-${n}`;
    return name;
  }

  /** One server as the item says, with what it names: created, changed, or left as it is. */
  private server(item: PushServer): { id: number; created: boolean; changed: boolean } {
    const existing = this.holder('servers', { ip: item.ip, port: item.port });
    const current = existing === undefined ? undefined : this.state.collections.servers.get(existing);
    const fields: Body = {};
    if (item.organization) fields.id_client = this.named('clients', { libelle: item.organization }, {}, 'organization');
    else if (!current) fields.id_client = FALLBACK_CLIENT_ID;
    if (item.environment) fields.id_environment = this.environment(item.environment);
    const tags = item.tags.map((name, n) =>
      this.named('tags', { name }, { color: '#FFFFFF', background: colourOf(name) }, `tag[${n}]`),
    );
    // Tags are added, never taken away: a tag set by other means stays (PmaControl does the same).
    const held = (current?.tags as number[] | undefined) ?? [];
    if (tags.some((id) => !held.includes(id))) fields.tags = [...new Set([...held, ...tags])].sort((a, b) => a - b);
    for (const field of SERVER_FIELDS) {
      if (item[field] !== undefined) fields[field === 'password' ? 'passwd' : field] = item[field];
    }
    if (current) {
      const input = this.parse('servers', 'patch', fields);
      const changed = this.batch.apply({ kind: 'patch', resource: 'servers', id: current.id, input } as WriteRequest);
      return { id: current.id, created: false, changed: changed.length > 0 };
    }
    if (fields.id_environment === undefined) {
      throw new ValidationFailed([
        { field: 'id_environment', code: 'required', message: 'is required for a server not registered yet' },
      ]);
    }
    fields.name = this.newName(item);
    // PmaControl's own default for a server it registers from a push.
    fields.ssh_login ??= 'root';
    const input = this.parse('servers', 'create', fields);
    const effects = this.batch.apply({ kind: 'create', resource: 'servers', input } as WriteRequest);
    return { id: effects[0]!.id, created: true, changed: true };
  }
}

/** The item's values that are the server's fields as they are (the password as `passwd`). */
const SERVER_FIELDS = [
  'ip',
  'port',
  'hostname',
  'login',
  'password',
  'ssh_nat',
  'ssh_port',
  'ssh_login',
  'display_name',
  'database',
  'is_monitored',
  'is_proxy',
  'is_vip',
  'is_ssl',
] as const;
