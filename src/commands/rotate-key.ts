import { parseArgs } from 'node:util';
import { keyFingerprint, openSecretKey, parseSecretKey, saveRotatedKeys } from '../application/secret-key.js';
import { createSecretBox } from '../application/secrets.js';
import { UsageError } from './catalog.js';
import { withCliService } from './cli-service.js';
import { cliCaller } from './token.js';

function parseNewKey(args: string[]): Buffer {
  const { values } = parseArgs({ args, options: { 'new-key': { type: 'string' } } });
  if (!values['new-key']) throw new UsageError('rotate-key needs --new-key KEY (64 hex digits or base64 of 32 bytes)');
  try {
    return parseSecretKey(values['new-key']);
  } catch {
    throw new UsageError('--new-key must be 32 bytes, written as 64 hex digits or in base64');
  }
}

/** What to do next, said once the log names the new key. The keys themselves are never printed. */
function nextSteps(fromEnv: boolean, dataDir: string): string[] {
  if (!fromEnv) {
    return [
      `${dataDir}/secret.key now holds the new key; the old one was added to ${dataDir}/secret.key.retired (both mode 0600).`,
      'Restart the instances of this DATA_DIR: until then they serve reads and refuse writes (503).',
    ];
  }
  return [
    'On every instance: set CONFIG_SECRET_KEY to the new key and add the old one to CONFIG_RETIRED_SECRET_KEYS',
    '(comma-separated), then restart them one by one. Until restarted they serve reads and refuse writes (503);',
    'an instance started with the old key as CONFIG_SECRET_KEY is refused.',
  ];
}

/**
 * `rotate-key --new-key KEY`: runs with the service's configuration (its current key), re-seals every
 * secret under the new key in one append that also records the new key's fingerprint, then stores
 * the keys (DATA_DIR key files) or says how to (CONFIG_SECRET_KEY). Reads go on throughout.
 */
export async function runRotateKey(args: string[]): Promise<number> {
  const next = parseNewKey(args);
  return withCliService(async (service, config) => {
    const current = openSecretKey({ fromEnv: config.secretKey, dataDir: config.dataDir }, undefined);
    if (current.equals(next)) throw new UsageError('--new-key is the current key');
    const done = await service.write.rotateKey(createSecretBox(next), keyFingerprint(next), cliCaller());
    if (!config.secretKey) saveRotatedKeys(config.dataDir, current, next);
    console.log(
      `re-sealed ${done.secrets} secrets of ${done.entries} entries; the log now names key ${keyFingerprint(next)}`,
    );
    for (const line of nextSteps(config.secretKey !== undefined, config.dataDir)) console.log(line);
    return 0;
  });
}
