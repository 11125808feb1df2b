import { defineResource } from '../shared/declaration.js';
import { integer, nullableInteger, nullableText, oneOf, ref, secret, text } from '../shared/fields.js';

export const CHANGE_SET_STATES = ['open', 'merged', 'reverted', 'closed'] as const;
export type ChangeSetState = (typeof CHANGE_SET_STATES)[number];

/**
 * A change set (section 17): writes staged together, reviewed as one diff, merged as one append and
 * reverted as one. Its entries are made and changed only by the change-sets wing (src/change-sets/):
 * opened (`ChangeSetOpened`), merged, reverted, closed — each an event of its own.
 */
export const changeSets = defineResource({
  name: 'change-sets',
  title: 'ChangeSet',
  label: 'change set',
  plural: 'ChangeSets',
  category: 'changeSet',
  description: 'Writes staged together, merged and reverted as one.',
  fields: {
    name: text(1, 200, { required: true, description: 'what it is for' }),
    description: nullableText(0, 2000, { description: 'more about it' }),
    state: oneOf(CHANGE_SET_STATES, { required: true, description: 'open → merged → reverted; open → closed' }),
    base: integer(0, Number.MAX_SAFE_INTEGER, {
      required: true,
      description: 'the position of the log when it was opened: its diff compares with the configuration then',
    }),
    created_by: text(1, 64, { required: true, description: 'who opened it' }),
    merge_request_id: nullableText(1, 200, { description: 'the request that merged it: its events share this id' }),
    merged_by: nullableText(1, 64, { description: 'who merged it' }),
    revert_request_id: nullableText(1, 200, { description: 'the request that reverted it' }),
  },
  deletion: 'hard',
  eventNames: { created: 'ChangeSetOpened', updated: 'ChangeSetUpdated' },
  updateEvents: ['ChangeSetMerged', 'ChangeSetReverted', 'ChangeSetClosed'],
  example: {},
});

export const STAGED_KINDS = ['create', 'replace', 'patch', 'delete', 'revert'] as const;

/**
 * One write staged in a change set: which, on what, and the request itself, sealed (a password it sets
 * is never shown). Staging one is its creation (`ChangeSetStaged`); it is never changed after.
 */
export const changeSetOperations = defineResource({
  name: 'change-set-operations',
  title: 'ChangeSetOperation',
  label: 'staged write',
  plural: 'ChangeSetOperations',
  category: 'changeSetOperation',
  description: 'A write staged in a change set.',
  fields: {
    change_set: ref('change-sets', { required: true, whenTargetDeleted: 'refuse', description: 'its change set' }),
    kind: oneOf(STAGED_KINDS, { required: true, description: 'create, replace (PUT), patch, delete or revert' }),
    resource: text(1, 40, { required: true, description: 'the resource written' }),
    target_id: nullableInteger(1, { description: 'the entry written (its id, decided when staged)' }),
    request: secret(2, 16_000_000, { required: true, description: 'the write, sealed; never shown' }),
  },
  deletion: 'hard',
  eventNames: { created: 'ChangeSetStaged' },
  example: {},
});
