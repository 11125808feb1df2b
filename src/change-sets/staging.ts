import type { GateQuestion, WriteGate, WriteRequest } from '../application/writes.js';
import { decide } from '../domain/decide.js';
import type { Effect } from '../domain/evolve.js';
import { isConfigurationName } from '../domain/resources.js';
import { DomainError, ValidationFailed } from '../domain/shared/errors.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import { tentatively } from '../domain/tentative.js';
import type { EntryRecord } from '../engine/table.js';
import { entryJson } from '../http/route-module.js';
import { applyStaged, type Decide, MAX_STAGED, type Open, openChangeSet, stagedWrites } from './staged.js';

/** What staging needs of the service: deciding a write, opening and sealing, the time. */
export interface StagingDeps {
  decide: Decide;
  open: Open;
  seal: (plain: string) => string;
  at: string;
}

/** One write staged: its entry as the change set would leave it (undefined: hard-deleted). */
export interface StagedResult {
  resource: string;
  id: number | null;
  operation: number;
  entry?: EntryRecord;
}

/** A refusal of the i-th of several writes, said so (a single write's refusal is the write's own). */
function located(error: unknown, index: number, count: number): unknown {
  if (count === 1 || !(error instanceof DomainError)) return error;
  if (error instanceof ValidationFailed)
    return new ValidationFailed(error.errors.map((e) => ({ ...e, field: `operations[${index}].${e.field}` })));
  return new DomainError(error.status, error.code, `operations[${index}]: ${error.message}`, {
    ...error.extra,
    operation: index,
  });
}

/**
 * The write as it is kept: a creation staged without an id keeps the id it was given (later writes may
 * name it); If-Match was checked against the change set when staged, and the merge finds what changed
 * since by comparing with `base` (conflicts), so it is not kept.
 */
function pinned(request: WriteRequest, id: number | undefined): WriteRequest {
  const { expected: _checked, ...kept } = request as WriteRequest & { expected?: unknown };
  const write = kept as WriteRequest;
  return write.kind === 'create' && write.id === undefined && id !== undefined ? { ...write, id } : write;
}

/**
 * Stages writes in an open change set, all or none: each decided on the configuration as the change
 * set (with the writes before it) leaves it, refused as the write itself would be; the events that
 * record them (one ChangeSetStaged each, the write sealed), and what each leaves of its entry.
 */
export function stage(state: ConfigState, id: number, requests: readonly WriteRequest[], deps: StagingDeps) {
  openChangeSet(state, id);
  const existing = stagedWrites(state, deps.open, id);
  if (existing.length + requests.length > MAX_STAGED)
    throw new DomainError(422, 'too_many', `a change set holds at most ${MAX_STAGED} writes`);
  return tentatively(state, deps.at, (fold) => {
    applyStaged(state, existing, deps.decide, fold);
    const events: DomainEvent[] = [];
    const results: StagedResult[] = [];
    requests.forEach((request, index) => {
      let own: Effect | undefined;
      try {
        [own] = fold(deps.decide(request, state));
      } catch (error) {
        throw located(error, index, requests.length);
      }
      const target = own?.id ?? ('id' in request ? request.id : undefined);
      const write = pinned(request, target);
      const fields = {
        change_set: id,
        kind: write.kind,
        resource: write.resource,
        target_id: target ?? null,
        request: deps.seal(JSON.stringify(write)),
      };
      const [event] = decide({ kind: 'create', resource: 'change-set-operations', fields } as never, state);
      fold([event]);
      events.push(event);
      results.push({
        resource: write.resource,
        id: target ?? null,
        operation: event.data.id as number,
        entry: own?.after,
      });
    });
    return { events, results };
  });
}

/** The 202 of a staged write: the entry as the change set would leave it. */
export function stagedResponse(id: number, result: StagedResult) {
  const head = JSON.stringify({
    change_set: id,
    operation: result.operation,
    resource: result.resource,
    id: result.id,
  });
  const item = result.entry ? entryJson(result.resource as 'servers', result.entry, false) : 'null';
  return {
    status: 202,
    headers: { Location: `/fr/api/change-sets/${id}`, 'Content-Type': 'application/json' },
    body: `${head.slice(0, -1)},"item":${item}}`,
  };
}

/**
 * The change sets' gate: a configuration write sent with `Change-Set: <id>` is staged in it, not
 * applied (202 with the entry as it would be); any other gated request with the header is refused.
 */
export function stagingGate(deps: Omit<StagingDeps, 'seal' | 'at'>, now: () => Date): WriteGate {
  return {
    decide(question: GateQuestion) {
      const { caller, state, request, operation } = question;
      const id = caller.changeSet;
      if (id === undefined || operation === 'change-set-merge') return undefined;
      const asked = request as { kind: string; write?: WriteRequest };
      if (asked.kind !== 'write' || !asked.write || !isConfigurationName(asked.write.resource))
        throw new DomainError(422, 'not_stageable', `a ${operation} is not a configuration write: it cannot be staged`);
      const at = now().toISOString();
      const { events, results } = stage(state, id, [asked.write], { ...deps, seal: question.seal, at });
      return { events, answer: () => stagedResponse(id, results[0]) };
    },
  };
}
