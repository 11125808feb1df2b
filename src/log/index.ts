import type { ConfigService } from '../application/service.js';
import type { RecordedLogKey } from '../domain/state.js';
import type { SignerKey } from '../engine/signed-note.js';
import { assertLogKeyMatches } from './key.js';
import { VerifiableLog } from './verifiable-log.js';

/**
 * The verifiable log (section 12), a wing of its own: what a leaf is (leaves.ts), the log key
 * (key.ts), checkpoints and proofs (verifiable-log.ts), `verify` (verify.ts, commands/), its routes
 * and OpenAPI operations. The core grows the read models' Merkle tree with `leafOf` and knows nothing
 * else of it. What `main.ts` plugs in:
 */
export { LOG_KEY_FILE, type LogKeySource, openLogKey } from './key.js';
export { leafOf } from './leaves.js';
export { logRoutes } from './routes.js';
export type { VerifiableLog } from './verifiable-log.js';

/**
 * The log served by a started instance: its signing key opened (openLogKey: made on a new log's first
 * start) and checked against the public key the log records, which is recorded first when the log has none
 * (another instance starting together may record its own first: then this key must be that one).
 */
export async function startLog(
  service: ConfigService,
  openKey: (recorded: RecordedLogKey | undefined) => SignerKey,
): Promise<VerifiableLog> {
  const key = openKey(service.state.logKey);
  if (!service.state.logKey) {
    const recorded = { type: 'LogKeyRecorded', data: { verifier_key: new VerifiableLog(key, service).publicKey() } };
    await service.writeOnce([recorded], (state) => !state.logKey);
  }
  assertLogKeyMatches(key, "this instance's log key", service.state.logKey!);
  return new VerifiableLog(key, service);
}
