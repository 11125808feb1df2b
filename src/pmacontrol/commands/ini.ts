import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ConfigService } from '../../application/service.js';
import { loadConfig, Progress, UsageError, withCliService } from '../../commands/command.js';
import type { Sealed } from '../../domain/shared/fields.js';
import type { EntryRecord } from '../../engine/table.js';
import { createPmaControlCrypt, type PmaControlCrypt, readPmaControlCryptKey } from '../crypt.js';
import { passwordsOf, pmacontrolIni } from '../ini.js';

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string' },
      watch: { type: 'boolean', default: false },
      'crypt-key-file': { type: 'string' },
    },
  });
  if (!values.out)
    throw new UsageError('pmacontrol-ini needs --out FILE (PmaControl’s configuration/db.config.ini.php)');
  const keyFile = values['crypt-key-file'] ?? loadConfig().pmacontrolCryptKeyFile;
  if (!keyFile) {
    throw new UsageError("pmacontrol-ini needs PmaControl's key (--crypt-key-file or PMACONTROL_CRYPT_KEY_FILE)");
  }
  let crypt: PmaControlCrypt;
  try {
    crypt = createPmaControlCrypt(readPmaControlCryptKey(keyFile));
  } catch (error) {
    throw new UsageError(`the PmaControl key file ${keyFile} cannot be used: ${(error as Error).message}`);
  }
  return { out: values.out, watch: values.watch ?? false, crypt };
}

const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** Writes `text` to `file` through a file beside it, synced then renamed: a reader sees the old file or the new one. */
function replace(file: string, text: string): void {
  let mode = 0o600;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    // a new file
  }
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  const fd = openSync(temporary, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}

/** Writes the file if its content would change; true if it did. */
function update(service: ConfigService, out: string, crypt: PmaControlCrypt): boolean {
  const current = read(out);
  const plain = (server: EntryRecord) =>
    typeof server.passwd === 'string' && server.passwd !== ''
      ? (service.write.openSealed(server.passwd as Sealed) ?? '')
      : '';
  const text = pmacontrolIni(service.state.collections.servers.values(), plain, crypt, passwordsOf(current ?? ''));
  if (text === current) return false;
  replace(out, text);
  return true;
}

/**
 * `pmacontrol-ini --out FILE [--watch]`: PmaControl's connection file, written atomically and only
 * when its content changes; with --watch, again after every change that affects it, until SIGTERM
 * or SIGINT. A restart writes nothing if the file already says what the configuration does.
 */
export async function runPmaControlIni(args: string[]): Promise<number> {
  const { out, watch, crypt } = parseOptions(args);
  const progress = new Progress('pmacontrol-ini');
  return withCliService(async (service) => {
    const say = (wrote: boolean) =>
      progress.note(`${out} ${wrote ? 'written' : 'unchanged'} at position ${service.revision + 1}`);
    say(update(service, out, crypt));
    if (!watch) return 0;
    let timer: NodeJS.Timeout | undefined;
    service.projector.listen(() => {
      // A burst of changes makes one write, a tenth of a second after the last batch.
      clearTimeout(timer);
      timer = setTimeout(() => {
        try {
          if (update(service, out, crypt)) say(true);
        } catch (error) {
          progress.note(`${out} could not be written: ${(error as Error).message}; written at the next change`);
        }
      }, 100);
    });
    // The log is followed on timers that do not hold the process: this one does, until a signal.
    const alive = setInterval(() => {}, 60_000);
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    clearInterval(alive);
    clearTimeout(timer);
    if (update(service, out, crypt)) say(true);
    return 0;
  });
}
