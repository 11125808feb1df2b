import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import type { Caller } from '../application/group-commit.js';
import type { ConfigService } from '../application/service.js';
import { parseDuration } from '../application/tokens.js';
import type { EntryRecord } from '../engine/table.js';
import { parseTokenRequest } from '../schemas/tokens.js';
import { UsageError } from './catalog.js';
import { withCliService } from './cli-service.js';

/** The actor the change log records for this command: the operating-system user who ran it. */
export function cliCaller(): Caller {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container's arbitrary uid): the actor stays cli:unknown
  }
  return { actor: `cli:${user}`, requestId: randomUUID() };
}

function describe(token: EntryRecord): string {
  const expires = token.expires_at ?? 'never';
  const state = token.revoked_at === null ? 'live' : `revoked ${token.revoked_at}`;
  const glass = token.break_glass === true ? '\tbreak-glass' : '';
  return `${token.id}\t${token.name}\t${token.role}\tsecrets=${token.secrets ? 'yes' : 'no'}${glass}\texpires=${expires}\t${state}`;
}

async function create(service: ConfigService, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      role: { type: 'string' },
      'expires-in': { type: 'string' },
      secrets: { type: 'boolean', default: false },
      'break-glass': { type: 'boolean', default: false },
    },
  });
  if (values.name === undefined || values.role === undefined)
    throw new UsageError('token create needs --name and --role');
  const now = new Date();
  const expiresIn = values['expires-in'];
  let lifetime: number | undefined;
  try {
    lifetime = expiresIn === undefined ? undefined : parseDuration(expiresIn);
  } catch (error) {
    throw new UsageError(`--expires-in: ${(error as Error).message}`);
  }
  const body = {
    name: values.name,
    role: values.role,
    secrets: values.secrets,
    expires_at: lifetime === undefined ? null : new Date(now.getTime() + lifetime).toISOString(),
  };
  const request = { ...parseTokenRequest(body, now), breakGlass: values['break-glass'] };
  const { token, entry } = await service.write.issueToken(request, cliCaller());
  console.log(`issued token ${describe(entry)}`);
  console.log('it is shown this once; the service keeps only a sealed digest of it:');
  console.log(token);
}

function list(service: ConfigService, args: string[]): void {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
  const tokens = service.state.collections.tokens.inOrder();
  if (values.json) {
    const shown = tokens.map(({ digest: _digest, version: _version, updated_at: _updated, ...token }) => token);
    console.log(JSON.stringify({ items: shown }, null, 2));
    return;
  }
  if (tokens.length === 0) console.log('no tokens');
  for (const token of tokens) console.log(describe(token));
}

async function revoke(service: ConfigService, args: string[]): Promise<void> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const id = Number(positionals[0]);
  if (positionals.length !== 1 || !Number.isSafeInteger(id) || id < 1)
    throw new UsageError('token revoke needs the id of one token');
  const before = service.state.collections.tokens.get(id);
  const token = await service.write.revokeToken(id, cliCaller());
  const again = before !== undefined && before.revoked_at !== null;
  console.log(`${again ? 'already revoked' : 'revoked'}: ${describe(token)}`);
}

/**
 * `token create|list|revoke`: starts the service on its configuration (same store, same key) without
 * HTTP, writes through it like any instance, and stops. A running service follows the log and knows
 * the new or revoked token within its poll interval.
 */
export async function runToken(argv: string[]): Promise<number> {
  const [action, ...args] = argv;
  if (!['create', 'list', 'revoke'].includes(action)) throw new UsageError(`unknown token command "${action ?? ''}"`);
  return withCliService(async (service) => {
    if (action === 'create') await create(service, args);
    else if (action === 'list') list(service, args);
    else await revoke(service, args);
    return 0;
  });
}
