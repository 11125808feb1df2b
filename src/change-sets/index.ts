import type { Caller, ConfigService } from '../application/service.js';
import type { Resolve } from './merge.js';
import { folded } from './overlay.js';
import { merge } from './run.js';
import { stagingGate } from './staging.js';

/**
 * Change sets (section 17), a wing of its own: a change set and its staged writes are collections of
 * the core's state (src/domain/change-sets/resource.ts). This wing stages the configuration's writes
 * sent with `Change-Set` (staging.ts: its gate, asked before the approvals'), shows the configuration
 * as a change set would leave it (overlay.ts, view.ts: a view over the state and the staged writes,
 * never a copy), computes its diff and conflicts (merge.ts, lookups.ts), merges and reverts it as one
 * append each (steps.ts, run.ts), and serves its routes (routes.ts, operations.ts, bulk.ts).
 */
export { changeSetsRoutes } from './routes.js';

/** Plugs change sets into a started service: the staging gate on every gated write, the overlays told of each fold. */
export function changeSets(service: ConfigService): void {
  service.projector.listen((batch) => {
    for (const { effects } of batch) folded(service.state, effects);
  });
  service.write.addGate(
    stagingGate(
      {
        decide: (request, state) => service.write.decided(request, state),
        open: (sealed) => service.openSecret(sealed),
      },
      () => service.now(),
    ),
  );
}

/** An approved merge, run again by its requester (the approvals wing executes it through this). */
export const approvedMerge = (service: ConfigService) => (request: { id: number; resolve: Resolve }, caller: Caller) =>
  merge(service, request.id, request.resolve, caller);
