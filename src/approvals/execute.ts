import type { Caller, ConfigService } from '../application/service.js';
import type { ImportItem, NewToken, WriteRequest } from '../application/writes.js';
import { approvalOf } from '../domain/approvals/decide.js';
import type { ResourceName } from '../domain/resources.js';
import { DomainError } from '../domain/shared/errors.js';
import { presentApproval } from './present.js';

/** How a held request of another wing's kind runs again (its kind → the wing's run), once approved. */
export type Replays = Record<string, (request: never, caller: Caller) => Promise<unknown>>;

let replays: Replays = {};

/** The wings' replays, set when the approvals are plugged in. */
export function setReplays(given: Replays): void {
  replays = given;
}

/** A held request as the approval keeps it (sealed), to run again exactly as it was asked. */
type Kept =
  | { kind: 'write'; write: WriteRequest }
  | { kind: 'secret-read'; resource: ResourceName; id: number }
  | { kind: 'token-issue'; token: NewToken }
  | { kind: 'import'; items: ImportItem[]; options: { secretsRight: boolean; skipInvalid?: boolean } };

const OWN = ['write', 'secret-read', 'token-issue', 'import'];

/** A held request of another wing's kind (a change set's merge), run again by that wing. */
async function replayed(kept: { kind: string }, as: Caller): Promise<Record<string, unknown>> {
  const replay = replays[kept.kind];
  if (!replay) throw new DomainError(409, 'unreadable', `this instance cannot run a held ${kept.kind}`);
  return (await replay(kept as never, as)) as Record<string, unknown>;
}

/** The request an approval holds, opened. */
function keptOf(service: ConfigService, id: number): Kept {
  const approval = approvalOf(service.state, id);
  const plain = service.openSecret(approval.request as string);
  if (plain === undefined)
    throw new DomainError(409, 'unreadable', `approval ${id}'s request was sealed under a key this instance lacks`);
  return JSON.parse(plain) as Kept;
}

/** What the execution did, as the answer shows it: the entry written, the secret, the token, the import. */
async function run(service: ConfigService, kept: Kept, as: Caller): Promise<Record<string, unknown>> {
  const { write } = service;
  if (!OWN.includes(kept.kind)) return replayed(kept, as);
  switch (kept.kind) {
    case 'write': {
      const result = await write.execute(kept.write, as);
      const entry = result.entry;
      return {
        result: { resource: kept.write.resource, id: result.id, version: entry?.version ?? null, deleted: !entry },
      };
    }
    case 'secret-read':
      return { secrets: await write.revealSecrets(kept.resource, kept.id, as) };
    case 'token-issue': {
      const { token, entry } = await write.issueToken(kept.token, as);
      return { token, result: { resource: 'tokens', id: entry.id, version: entry.version, deleted: false } };
    }
    case 'import':
      return { import: await write.importEntries(kept.items, as, { dryRun: false, ...kept.options }) };
  }
}

/**
 * Executes an approved request: exactly the request that was held, decided again on the state now
 * (every rule re-checked), with ApprovalExecuted in the same append — which the approval's state
 * allows once: a second execution, here or on another instance, is refused (409).
 */
export async function executeApproval(service: ConfigService, id: number, caller: Caller) {
  const kept = keptOf(service, id);
  const done = await run(service, kept, { ...caller, approval: id });
  const approval = service.state.collections.approvals.get(id)!;
  return { approval: presentApproval(approval, service.now().toISOString()), ...done };
}
