import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.js';

const ENCRYPT = join(ROOT, 'test/support/pmacontrol-encrypt.php');
const DECRYPT = join(ROOT, 'test/support/pmacontrol-decrypt.php');

/** Debian's php-cli (installed by .ci/run); PHP_REQUIRED=1 makes its absence a failure instead of a skip. */
export function phpAvailable(): boolean {
  const found = spawnSync('php', ['-r', 'echo extension_loaded("openssl") && extension_loaded("zlib") ? "ok" : "no";']);
  const ok = found.status === 0 && found.stdout.toString() === 'ok';
  if (!ok && process.env.PHP_REQUIRED === '1')
    throw new Error('PHP_REQUIRED=1 but php (with openssl, zlib) is missing');
  if (!ok) console.log('SKIPPED: PmaControl ciphertext suites: php-cli is not installed (.ci/run installs it)');
  return ok;
}

/**
 * Writes a crypt.config.php as PmaControl's installer does: 256 printable characters (33–126) without
 * a quote, inside define('CRYPT_KEY', '…'). A trailing backslash would escape the closing quote, so
 * the last character is not one.
 */
export function writeCryptConfig(dir: string): string {
  let key = '';
  while (key.length < 256) {
    const c = String.fromCharCode(randomInt(33, 127));
    if (c !== "'") key += c;
  }
  if (key.endsWith('\\')) key = `${key.slice(0, -1)}k`;
  const path = join(dir, 'crypt.config.php');
  writeFileSync(path, `<?php\n\nif (! defined('CRYPT_KEY'))\n{\n    define('CRYPT_KEY', '${key}');\n}\n`);
  return path;
}

/** Ciphertexts made by PHP itself, as PmaControl's Chiffrement::encrypt makes them. */
export function pmacontrolEncrypt(configFile: string, values: unknown[], zeroPadding = false): string[] {
  const input = values.map((v) => `${JSON.stringify(v)}\n`).join('');
  const run = spawnSync('php', [ENCRYPT, configFile, ...(zeroPadding ? ['zero-padding'] : [])], { input });
  if (run.status !== 0) throw new Error(`php failed: ${run.stderr.toString()}`);
  return run.stdout.toString().trim().split('\n');
}

/** Values opened by PHP itself, as PmaControl's Chiffrement::decrypt opens them. */
export function pmacontrolDecrypt(configFile: string, ciphertexts: string[]): string[] {
  const run = spawnSync('php', [DECRYPT, configFile], { input: `${ciphertexts.join('\n')}\n` });
  if (run.status !== 0) throw new Error(`php failed: ${run.stderr.toString()}`);
  return run.stdout
    .toString()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string);
}
