import * as assert from 'uvu/assert';
import { BASE, type Reply, send } from '../support/harness.js';
import { runCli, type ServiceProcess } from '../support/process.js';
import { tokenKnown } from '../support/receiver.js';

/** The headers of each token the approvals' tests use, by name. */
export type Tokens = Record<string, Record<string, string>>;

/**
 * Tokens issued from the CLI: `root` (admin, secrets), `alice` (writer, secrets: the requester), `bob`
 * and `carol` (admins: the approvers), `dave` (reader), `glass` (admin, break glass, secrets).
 */
export async function issueTokens(services: ServiceProcess[], env: Record<string, string>): Promise<Tokens> {
  const specs: [string, string, string[]][] = [
    ['root', 'admin', ['--secrets']],
    ['alice', 'writer', ['--secrets']],
    ['bob', 'admin', []],
    ['carol', 'admin', []],
    ['dave', 'reader', []],
    ['glass', 'admin', ['--secrets', '--break-glass']],
  ];
  const tokens: Tokens = {};
  for (const [name, role, extra] of specs) {
    const made = await runCli(['token', 'create', '--name', name, '--role', role, ...extra], env);
    assert.is(made.code, 0, made.stderr);
    tokens[name] = await tokenKnown(
      services.map((one) => one.url),
      made.stdout.trim().split('\n').pop()!,
    );
  }
  return tokens;
}

/** A production server (environment 1) with a password. */
export async function prodServer(url: string, n: number, password: string, headers = {}): Promise<number> {
  const made = await send(url, 'POST', `${BASE}/servers`, {
    headers,
    body: { id_client: 99, id_environment: 1, name: `db-prod-${n}`, ip: `10.7.0.${n}`, login: 'dba', passwd: password },
  });
  assert.is(made.status, 201, made.text);
  return made.body.id;
}

/** Creates a policy as root. */
export async function policy(url: string, tokens: Tokens, body: Record<string, unknown>): Promise<number> {
  const made = await send(url, 'POST', '/fr/api/policies', { headers: tokens.root, body });
  assert.is(made.status, 201, made.text);
  return made.body.id;
}

/** A vote (or withdraw, execute) by a token. */
export const act = (
  url: string,
  tokens: Tokens,
  who: string,
  id: number,
  step: string,
  body?: object,
): Promise<Reply> =>
  send(url, 'POST', `/fr/api/approvals/${id}/${step}`, { headers: tokens[who], ...(body ? { body } : {}) });

/** The change log's items of a type, as an admin sees them. */
export async function changesOf(url: string, tokens: Tokens, type: string) {
  const reply = await send(url, 'GET', `/fr/api/changes?type=${type}&limit=1000`, { headers: tokens.root });
  assert.is(reply.status, 200, reply.text);
  return reply.body.items as { position: number; actor: string; id: number; data: Record<string, unknown> }[];
}
