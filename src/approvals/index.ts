import type { ConfigService } from '../application/service.js';
import { policyChecks } from './checks.js';
import { type Replays, setReplays } from './execute.js';
import { approvalGate } from './gate.js';

/**
 * Approvals (section 16), a wing of its own: policies are entries of the core (their declaration,
 * src/domain/policies/resource.ts, of scope `admin`), approvals a collection of the core's state
 * (src/domain/approvals/: the declaration, which policies hold a change, the votes, the checks of an
 * execution). This wing checks policies on every write (checks.ts), is the gate of every gated write
 * (gate.ts: held as ApprovalRequested, run, or passed by break glass), runs an approved request
 * again (execute.ts) and serves the approvals' routes (routes.ts, operations.ts).
 */
export { approvalsRoutes } from './routes.js';

/**
 * Plugs the approvals into a started service: policies checked on every write, the gate on every gated
 * one; `replays`: how a held request of another wing's kind runs again once approved (a change set's
 * merge).
 */
export function approvals(service: ConfigService, replays: Replays = {}): void {
  service.write.addRules(policyChecks);
  service.write.addGate(approvalGate(() => service.now()));
  setReplays(replays);
}
