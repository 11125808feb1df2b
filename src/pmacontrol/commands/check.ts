import { parseArgs } from 'node:util';
import { withCliService } from '../../commands/command.js';
import type { Sealed } from '../../domain/shared/fields.js';
import { inventoryProblems } from '../limits.js';

/**
 * `pmacontrol-check [--json]`: what the inventory holds that PmaControl's tables could not store (a
 * character outside latin1, a value too long, an integer past INT, two names its collation takes for
 * one), each with its entry and field; exit 1 if there is any. Run before the projection is first
 * configured: from then on such writes are refused at the API.
 */
export async function runPmaControlCheck(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
  return withCliService(async (service) => {
    const open = (sealed: Sealed) => service.write.openSealed(sealed);
    const found = inventoryProblems((name) => service.state.collections[name].values(), open);
    if (values.json) console.log(JSON.stringify({ position: service.revision + 1, problems: found }));
    else {
      for (const { resource, id, field, message } of found) console.log(`${resource} ${id} ${field}: ${message}`);
      console.log(
        found.length === 0
          ? 'PmaControl can store every entry'
          : `${found.length} values PmaControl cannot store: change them before its tables are written`,
      );
    }
    return found.length === 0 ? 0 : 1;
  });
}
