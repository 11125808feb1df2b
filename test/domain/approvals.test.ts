import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { executable, reached, voted } from '../../src/domain/approvals/decide.js';
import { catching, subjectsOf } from '../../src/domain/approvals/policy.js';
import type { HeldBy, Vote } from '../../src/domain/approvals/resource.js';
import { evolve } from '../../src/domain/evolve.js';
import type { DomainEvent } from '../../src/domain/shared/types.js';
import { type ConfigState, emptyState } from '../../src/domain/state.js';

/** The rules of approvals without a service: which policies hold a change, when votes are enough. */

const AT = '2026-11-29T10:00:00.000Z';

function stateWith(events: DomainEvent[]): ConfigState {
  const state = emptyState();
  for (const event of events) fold(state, event);
  return state;
}

/** Folds one more event into the state. */
function fold(state: ConfigState, event: DomainEvent): void {
  evolve(state, {
    ...event,
    revision: state.revision + 1,
    metadata: { actor: 't', request_id: 'r', at: AT, schema: 2 },
  });
}

const policy = (id: number, fields: Record<string, unknown>): DomainEvent => ({
  type: 'PolicyCreated',
  data: {
    id,
    name: `p${id}`,
    enabled: true,
    operations: ['update'],
    resources: ['tags'],
    where: [],
    approvals: 1,
    approver_roles: ['admin'],
    approver_tokens: [],
    ttl: 'PT4H',
    ...fields,
  },
});
const tag = (id: number, name: string): DomainEvent => ({
  type: 'TagCreated',
  data: { id, name, color: '#000000', background: '#FFFFFF' },
});
const renamed = (id: number, name: string) => [{ type: 'TagUpdated', data: { id, changes: { name } } }];
const held = (state: ConfigState, events: DomainEvent[], operation = 'update' as const) =>
  catching(state, operation, subjectsOf(events, state)).map((p) => p.name);

test('a condition holds on the entry before or after the change: moved into or out of what it guards', () => {
  const state = stateWith([
    tag(1, 'prod-a'),
    tag(2, 'dev-b'),
    policy(1, { where: [{ field: 'name', in: ['prod-a', 'prod-c'] }] }),
  ]);
  assert.equal(held(state, renamed(1, 'dev-a')), ['p1'], 'out of it: before holds');
  assert.equal(held(state, renamed(2, 'prod-c')), ['p1'], 'into it: after holds');
  assert.equal(held(state, renamed(2, 'dev-c')), [], 'neither side');
});

test('transitions test the change itself; eq null matches a missing value; resources and operations filter', () => {
  const state = stateWith([
    tag(1, 'a'),
    policy(1, { where: [{ field: 'name', from: 'a', to: 'b' }] }),
    policy(2, { resources: [], where: [{ field: 'color', eq: '#000000' }] }),
    policy(3, { resources: ['servers'] }),
    policy(4, { operations: ['delete'] }),
    policy(5, { enabled: false }),
  ]);
  assert.equal(held(state, renamed(1, 'b')), ['p1', 'p2']);
  assert.equal(held(state, renamed(1, 'c')), ['p2']);
  assert.equal(held(state, [{ type: 'TagDeleted', data: { id: 1 } }], 'delete' as never), ['p4']);
});

test('policies filed by value: with 1,000, only the one whose value the entry holds is found', () => {
  const many = Array.from({ length: 1000 }, (_, i) => policy(i + 1, { where: [{ field: 'name', eq: `t${i}` }] }));
  const state = stateWith([tag(1, 't500'), ...many]);
  assert.equal(held(state, renamed(1, 'x')), ['p501'], 'before');
  assert.equal(held(stateWith([tag(1, 'x'), ...many]), renamed(1, 't7')), ['p8'], 'after');
});

test('approved when every policy has its approvals from its own approvers', () => {
  const two: HeldBy = { id: 1, name: 'two', approvals: 2, roles: ['admin'], tokens: [] };
  const carol: HeldBy = { id: 2, name: 'carol', approvals: 1, roles: [], tokens: ['carol'] };
  const vote = (actor: string, role: string, way: 'approve' | 'reject' = 'approve'): Vote => ({
    actor,
    role,
    vote: way,
    reason: null,
    at: AT,
  });
  assert.not.ok(reached([two], [vote('bob', 'admin')]));
  assert.ok(reached([two], [vote('bob', 'admin'), vote('dan', 'admin')]));
  assert.not.ok(reached([two], [vote('bob', 'admin'), vote('w', 'writer')]), 'a writer is no admin');
  assert.not.ok(reached([two, carol], [vote('bob', 'admin'), vote('dan', 'admin')]), 'carol has not voted');
  assert.ok(reached([two, carol], [vote('bob', 'admin'), vote('carol', 'reader'), vote('dan', 'admin')]));
});

/** A pending approval of an update of tags/1 at version 1, by alice, one admin needed. */
const APPROVAL: DomainEvent = {
  type: 'ApprovalRequested',
  data: {
    id: 1,
    operation: 'update',
    resource: 'tags',
    target_id: 1,
    target_version: 1,
    requester: 'alice',
    request_id: 'r1',
    policies: [{ id: 1, name: 'p', approvals: 1, roles: ['admin'], tokens: [] }],
    changes: [],
    request: 'sealed',
    state: 'pending',
    votes: [],
    reason: null,
    expires_at: '2026-11-29T11:00:00.000Z',
    executed_request_id: null,
  },
};

test('votes: self, twice, after the end, past the expiry; the execution checks the target version', () => {
  const state = stateWith([tag(1, 'a'), APPROVAL]);
  const by = (actor: string, role = 'admin') => ({ actor, role, requestId: 'x' });
  const yes = { vote: 'approve' as const, reason: null };
  assert.is(voted(state, 1, by('alice'), yes, AT).refusal?.message.includes('own request'), true);
  assert.is((voted(state, 1, by('w', 'writer'), yes, AT).refusal as { code?: string })?.code, 'not_an_approver');
  const late = voted(state, 1, by('bob'), yes, '2026-11-29T11:00:00.000Z');
  assert.equal(
    [late.events.map((e) => e.type), (late.refusal as { status?: number })?.status],
    [['ApprovalExpired'], 410],
  );
  const ok = voted(state, 1, by('bob'), yes, AT);
  assert.equal(
    ok.events.map((e) => [e.type, (e.data.changes as { state: string }).state]),
    [['ApprovalVoted', 'approved']],
  );
  for (const event of ok.events) fold(state, event);
  assert.is(executable(state, 1, by('alice'), 'update', AT), undefined, 'approved, target unchanged: it may run');
  evolve(state, {
    ...renamed(1, 'b')[0],
    revision: state.revision + 1,
    metadata: { actor: 'x', request_id: 'y', at: AT },
  });
  const stale = executable(state, 1, by('alice'), 'update', AT);
  assert.equal([stale?.events[0].type, (stale?.refusal as { code?: string })?.code], ['ApprovalStale', 'stale']);
});

test.run();
