import { linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartRefused } from './start-refused.js';

/** A key file's text, refused when the file is readable by group or others. */
export function readProtected(file: string): string {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new StartRefused(
      `${file} is readable by others (mode ${mode.toString(8).padStart(4, '0')}): run chmod 600 ${file} and start again`,
    );
  }
  return readFileSync(file, 'utf8');
}

/**
 * Writes `content` as `file` (mode 0600) unless it exists, atomically and exclusively (`link`), so
 * that instances starting together on one DATA_DIR agree on one key; returns the file's text.
 */
export function createKeyFile(file: string, content: string): string {
  mkdirSync(join(file, '..'), { recursive: true });
  const draft = `${file}.${process.pid}.tmp`;
  writeFileSync(draft, content, { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return readProtected(file);
}
