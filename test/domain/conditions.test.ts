import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allHold, type Condition, conditionHolds, conditionProblems } from '../../src/domain/conditions.js';

const change = (diff: [string, unknown, unknown][], after: Record<string, unknown> = {}) => ({
  diff: diff.map(([field, before, value]) => ({ field, before, after: value })),
  after,
});

test('from/to holds on the change that makes the transition only', () => {
  const off: Condition = { field: 'is_monitored', from: true, to: false };
  assert.ok(conditionHolds(off, change([['is_monitored', true, false]], { is_monitored: false })));
  // A later change of another field: the value is still false, but this change made no transition.
  assert.not.ok(conditionHolds(off, change([['port', 3306, 3307]], { is_monitored: false })));
  assert.not.ok(conditionHolds(off, change([['is_monitored', false, true]], { is_monitored: true })));
  assert.ok(conditionHolds({ field: 'port', to: 3307 }, change([['port', 3306, 3307]])));
  assert.not.ok(conditionHolds({ field: 'port', from: 3307 }, change([['port', 3306, 3307]])));
});

test('changed holds when the field is in the diff', () => {
  assert.ok(conditionHolds({ field: 'ip', changed: true }, change([['ip', 'a', 'b']])));
  assert.not.ok(conditionHolds({ field: 'ip', changed: true }, change([['port', 1, 2]], { ip: 'a' })));
});

test('eq and in test the entry after the change, the diff first', () => {
  assert.ok(conditionHolds({ field: 'id_environment', eq: 1 }, change([['port', 1, 2]], { id_environment: 1 })));
  assert.not.ok(
    conditionHolds({ field: 'id_environment', eq: 1 }, change([['id_environment', 1, 2]], { id_environment: 1 })),
  );
  assert.ok(conditionHolds({ field: 'id_environment', in: [1, 3] }, change([], { id_environment: 3 })));
  assert.not.ok(conditionHolds({ field: 'id_environment', in: [1, 3] }, change([], { id_environment: 2 })));
  // A deleted entry has no values: eq null holds, eq 1 does not.
  assert.ok(conditionHolds({ field: 'id_environment', eq: null }, { diff: [], after: undefined }));
  assert.not.ok(conditionHolds({ field: 'id_environment', eq: 1 }, { diff: [], after: undefined }));
});

test('every condition must hold, and tests combine on one field', () => {
  const conditions: Condition[] = [
    { field: 'is_monitored', from: true, to: false },
    { field: 'id_environment', in: [1] },
  ];
  assert.ok(allHold(conditions, change([['is_monitored', true, false]], { id_environment: 1 })));
  assert.not.ok(allHold(conditions, change([['is_monitored', true, false]], { id_environment: 2 })));
  assert.ok(allHold([], change([])));
  assert.not.ok(conditionHolds({ field: 'port', changed: true, in: [3307] }, change([['port', 3306, 3308]])));
});

test('problems: an unknown field and a transition that cannot happen', () => {
  const problems = conditionProblems(
    [
      { field: 'nope', eq: 1 },
      { field: 'port', from: 1, to: 1 },
    ],
    (field) => (field === 'nope' ? 'servers has no field "nope"' : undefined),
    'where',
  );
  assert.equal(
    problems.map((p) => p.field),
    ['where[0].field', 'where[1]'],
  );
});

test.run();
