import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ConfigService } from '../../application/service.js';
import { loadConfig, Progress, UsageError, withCliService } from '../../commands/command.js';
import type { Sealed } from '../../domain/shared/fields.js';
import type { EntryRecord } from '../../engine/table.js';
import { createPmaControlCrypt, type PmaControlCrypt, readPmaControlCryptKey } from '../crypt.js';
import { IniConflict, pmacontrolIni } from '../ini.js';

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string' },
      watch: { type: 'boolean', default: false },
      mode: { type: 'string', default: '0640' },
      'crypt-key-file': { type: 'string' },
    },
  });
  if (!/^0?[0-7]{3}$/.test(values.mode ?? ''))
    throw new UsageError(`--mode must be an octal mode such as 0640, not "${values.mode}"`);
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
  return { out: values.out, watch: values.watch ?? false, mode: Number.parseInt(values.mode!, 8), crypt };
}

const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** The file a path names: a symbolic link followed to its target (which may not exist yet). */
function target(file: string): string {
  let path = resolve(file);
  for (let hops = 0; hops < 40; hops++) {
    let stats: Stats;
    try {
      stats = lstatSync(path);
    } catch {
      return path;
    }
    if (!stats.isSymbolicLink()) return path;
    path = resolve(dirname(path), readlinkSync(path));
  }
  throw new Error(`${file}: too many symbolic links`);
}

/** A temporary file beside `path`, made exclusively (O_EXCL): a name planted there, a link included, is never written through. */
function exclusiveTemporary(path: string): { name: string; fd: number } {
  for (let attempt = 0; ; attempt++) {
    const name = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      return { name, fd: openSync(name, 'wx', 0o600) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 10) throw error;
    }
  }
}

/**
 * Writes `text` to `file` through a temporary file beside it, synced then renamed: a reader sees the
 * old file or the new one. A symbolic link is followed (its target is replaced, the link stays); a
 * replaced file keeps its mode and owner, a new one gets `mode`.
 */
function replace(file: string, text: string, mode: number): void {
  const path = target(file);
  let existing: Stats | undefined;
  try {
    existing = statSync(path);
  } catch {
    // a new file
  }
  const { name, fd } = exclusiveTemporary(path);
  try {
    writeSync(fd, text);
    fchmodSync(fd, existing ? existing.mode & 0o7777 : mode);
    if (existing && (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.())) {
      try {
        fchownSync(fd, existing.uid, existing.gid);
      } catch {
        throw new Error(
          `${path} belongs to uid ${existing.uid}, gid ${existing.gid}: run as them (or root) to keep its owner`,
        );
      }
    }
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(name);
    throw error;
  }
  closeSync(fd);
  renameSync(name, path);
  const directory = openSync(dirname(path), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
}

/** Writes the file if its content would change; true if it did. */
function update(service: ConfigService, out: string, crypt: PmaControlCrypt, mode: number): boolean {
  const current = read(target(out));
  const plain = (server: EntryRecord) =>
    typeof server.passwd === 'string' && server.passwd !== ''
      ? (service.write.openSealed(server.passwd as Sealed) ?? '')
      : '';
  const text = pmacontrolIni(service.state.collections.servers.values(), plain, crypt, current ?? '');
  if (text === current) return false;
  replace(out, text, mode);
  return true;
}

/**
 * `pmacontrol-ini --out FILE [--watch]`: PmaControl's connection file, written atomically and only
 * when its content changes; with --watch, again after every change that affects it, until SIGTERM
 * or SIGINT. A restart writes nothing if the file already says what the configuration does.
 */
export async function runPmaControlIni(args: string[]): Promise<number> {
  const { out, watch, mode, crypt } = parseOptions(args);
  const progress = new Progress('pmacontrol-ini');
  return withCliService(async (service) => {
    const say = (wrote: boolean) =>
      progress.note(`${out} ${wrote ? 'written' : 'unchanged'} at position ${service.revision + 1}`);
    try {
      say(update(service, out, crypt, mode));
    } catch (error) {
      if (!(error instanceof IniConflict)) throw error;
      console.error(`refused: ${error.message}`);
      return 1;
    }
    if (!watch) return 0;
    let timer: NodeJS.Timeout | undefined;
    service.projector.listen(() => {
      // A burst of changes makes one write, a tenth of a second after the last batch.
      clearTimeout(timer);
      timer = setTimeout(() => {
        try {
          if (update(service, out, crypt, mode)) say(true);
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
    if (update(service, out, crypt, mode)) say(true);
    return 0;
  });
}
