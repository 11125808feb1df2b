import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { ReadModelsRebuilding } from '../port.js';

/**
 * What the read-model store does about damage: which SQLite errors mean a file cannot be used, how a
 * damaged file is set aside, and the watch that tells listeners once and refuses questions until the
 * rebuild is saved (another instance setting the file aside, or a finished rebuild waiting beside it,
 * is told the same way). Files of the store are removed and moved here too, with their WAL files.
 */

/** SQLite errors that mean the file cannot be used as read models: it is set aside and rebuilt. */
const DAMAGED = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN|IOERR)/;
/** Those of them that show damage once the file was opened and read (an I/O error may pass). */
const DAMAGED_IN_USE = /^SQLITE_(NOTADB|CORRUPT)/;

const codeOf = (error: unknown) => (error as { code?: string }).code ?? '';
export const isDamage = (error: unknown) => DAMAGED.test(codeOf(error));
export const isDamageInUse = (error: unknown) => DAMAGED_IN_USE.test(codeOf(error));

/** The file a path names, to tell whether another process has set it aside since it was opened. */
export const identity = (path: string) => {
  try {
    const { dev, ino } = statSync(path);
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
};

/** Beside the read models, a finished rebuild waiting for the serving instance to take it in. */
export const REBUILT = '.rebuilt';
/** The reason told to `onDamage` listeners when a finished rebuild is waiting (not damage). */
export const REBUILT_WAITING = 'a rebuild of the read models (replay --apply) is waiting to be taken in';

/** Renames the file and its WAL files `<file>.corrupt-<time>`; returns that name. */
export function setAside(location: string): string {
  const setAsideAs = `${location}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(location + suffix)) renameSync(location + suffix, setAsideAs + suffix);
  }
  return setAsideAs;
}

/** Deletes a closed read-model file with its WAL files. */
export function removeFile(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
}

/** Puts the closed read models of `from` in place of those of `to`, which must be closed too. */
export function moveFile(from: string, to: string): void {
  removeFile(to);
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix);
}

/**
 * Damage found while a file served: told once to every listener; from then on every question is
 * refused (ReadModelsRebuilding) until `repaired`.
 */
export class DamageWatch {
  /** Damage was found and not yet repaired: questions are refused. */
  damaged = false;
  /** The file opened (device and inode): another instance that found it damaged renames it. */
  opened?: string;
  private readonly listeners: ((reason: string) => void)[] = [];

  constructor(private readonly location: string) {}

  listen(listener: (reason: string) => void): void {
    this.listeners.push(listener);
  }

  notice(reason: string): void {
    if (this.damaged) return;
    this.damaged = true;
    for (const listener of this.listeners) listener(reason);
  }

  /** The error a question ends with: damage becomes ReadModelsRebuilding (and is told), others pass. */
  translate(error: unknown): unknown {
    if (!isDamageInUse(error)) return error;
    this.notice((error as Error).message);
    return new ReadModelsRebuilding();
  }

  /** Whether the file in place is no longer the one opened (another instance set it aside). */
  get replaced(): boolean {
    return identity(this.location) !== this.opened;
  }

  /**
   * Before a question: damage noticed if another instance set the file aside, or if a finished
   * rebuild waits beside a file in use; refused while damage waits for its repair.
   */
  check(inUse: boolean): void {
    if (!this.damaged && this.opened !== undefined && this.replaced) {
      this.notice(`${this.location} was set aside by another instance`);
    }
    if (!this.damaged && inUse && existsSync(this.location + REBUILT)) this.notice(REBUILT_WAITING);
    if (this.damaged) throw new ReadModelsRebuilding();
  }
}
