import type { DecideRules } from '../domain/decide.js';
import type { ResourceName } from '../domain/resources.js';
import { Conflict, ValidationFailed } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import { INT_RANGE } from './columns.js';
import { CANNOT_STORE, columnProblems, pmacontrolTwin } from './limits.js';
import { keptOf } from './rows.js';

/**
 * PmaControl's rules on every write while its tables are written (PMACONTROL_DB_URL): a value its
 * columns cannot hold is a 422 on the field that says why ("PmaControl stores tag.name in latin1,
 * which has no …"); a name its collation takes for another's is a 409 naming that entry; new ids
 * start above the rows PmaControl made itself.
 */
export function pmacontrolRules(
  ids: { firstId(resource: string): number },
  open: (sealed: Sealed) => string | undefined,
): DecideRules {
  return {
    check({ resource, id, next, before, changed, state }) {
      const kept = keptOf(resource.name as ResourceName);
      if (!kept) return;
      const created = before === undefined;
      const problems = columnProblems(kept, { ...next, id }, changed, open, created);
      const last = INT_RANGE.int[1];
      if (created && id >= last && problems.length === 0) {
        problems.push({
          field: 'id',
          code: CANNOT_STORE,
          message: `PmaControl's ids end at ${last}: an entry there would leave no id for the next one`,
        });
      }
      if (problems.length > 0) throw new ValidationFailed(problems, { listAll: true });
      const twin = pmacontrolTwin(kept, next, id, new Set(changed), state.collections[kept.name].values());
      if (twin) {
        const holder = { resource: kept.name, id: twin.id, fields: twin.columns };
        const values = twin.columns.map((column) => `"${String(next[column])}"`).join(', ');
        throw new Conflict(
          `${kept.resource.declaration.label} ${twin.columns.join(', ')} ${values} is the same as that of ` +
            `${kept.name} ${twin.id} for PmaControl, whose ${kept.table.table} table compares it as latin1_swedish_ci`,
          holder,
        );
      }
    },
    firstId: (resource) => ids.firstId(resource),
  };
}
