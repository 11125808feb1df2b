import { leafText } from '../../projections/leaves.js';
import { Frontier, type Hash, leafHash } from '../engine/merkle.js';
import { type Checkpoint, NoteError, openNote, parseCheckpoint, type VerifierKey } from '../engine/signed-note.js';
import { logged, type RecordedEvent } from '../event-store/port.js';

/**
 * The check `pmacontrol-config verify` runs, apart from where its inputs come from: the log read
 * from the store (never through the service), every leaf and the tree made again, then each
 * checkpoint an auditor kept and the service's own latest compared with them.
 */

/** A checkpoint to check: a signed note, with where it comes from (a file name, "the service"). */
export interface KeptCheckpoint {
  name: string;
  note: string;
}

/** The tree as the service keeps it (its read models): its size, and its leaf hashes from an index. */
export interface StoredTree {
  size: number;
  /** The leaf hashes from `from`, at most `count` of them, in order. */
  leaves(from: number, count: number): Hash[];
  /** The root of its first `size` leaves, as it would sign it. */
  root(size: number): Hash;
}

export interface Finding {
  /** Which checkpoint, or "the log". */
  subject: string;
  ok: boolean;
  detail: string;
}

export interface Verification {
  /** The number of events read. */
  events: number;
  root: Hash;
  /** The first position whose event is not what the service's tree holds (changed, removed, inserted, moved). */
  firstDifference?: number;
  findings: Finding[];
}

/** Reads the log in order: batches of events from `fromRevision`, empty at its end. */
export type LogReader = (fromRevision: number, maxCount: number) => Promise<RecordedEvent[]>;

const BATCH = 5000;

/** The checkpoints that open with `key` and name this log; the others become findings. */
function opened(kept: KeptCheckpoint[], key: VerifierKey, findings: Finding[]) {
  const wanted: { kept: KeptCheckpoint; checkpoint: Checkpoint }[] = [];
  for (const one of kept) {
    try {
      const checkpoint = parseCheckpoint(openNote(one.note, key));
      if (checkpoint.origin !== key.name) throw new NoteError(`its origin is ${checkpoint.origin}, not ${key.name}`);
      wanted.push({ kept: one, checkpoint });
    } catch (error) {
      findings.push({
        subject: one.name,
        ok: false,
        detail: `not a checkpoint of this log: ${(error as Error).message}`,
      });
    }
  }
  return wanted;
}

/** The tree made again from the log: its roots at `sizes`, and where it first differs from the stored one. */
async function recompute(read: LogReader, sizes: Set<number>, stored?: StoredTree, progress?: (n: number) => void) {
  const rootsAt = new Map<number, Hash>();
  const frontier = new Frontier();
  if (sizes.has(0)) rootsAt.set(0, frontier.root());
  let firstDifference: number | undefined;
  let gap: string | undefined;
  for (;;) {
    const events = await read(frontier.size, BATCH);
    const storedLeaves = stored ? stored.leaves(frontier.size, events.length) : [];
    for (const [i, event] of events.entries()) {
      const position = frontier.size + 1;
      if (event.revision !== frontier.size && gap === undefined) {
        gap = `position ${position} holds the event of revision ${event.revision}: an event was removed, inserted or moved`;
        firstDifference ??= position;
      }
      const leaf = leafHash(leafText(logged(event)));
      if (storedLeaves[i] !== undefined && !storedLeaves[i].equals(leaf)) firstDifference ??= position;
      frontier.append(leaf);
      if (sizes.has(frontier.size)) rootsAt.set(frontier.size, frontier.root());
    }
    progress?.(frontier.size);
    if (events.length < BATCH) break;
  }
  if (stored && firstDifference === undefined && stored.size > frontier.size) firstDifference = frontier.size + 1;
  return { frontier, rootsAt, firstDifference, gap };
}

/**
 * Recomputes the tree from the log and checks every checkpoint: signed by `key`, of this log's
 * origin, no larger than the log, and with the root of the log's first `size` leaves.
 */
export async function verifyLog(options: {
  read: LogReader;
  key: VerifierKey;
  checkpoints: KeptCheckpoint[];
  stored?: StoredTree;
  progress?: (events: number) => void;
}): Promise<Verification> {
  const { stored } = options;
  const findings: Finding[] = [];
  const wanted = opened(options.checkpoints, options.key, findings);
  const sizes = new Set(wanted.map(({ checkpoint }) => checkpoint.size));
  if (stored) sizes.add(stored.size);
  const { frontier, rootsAt, firstDifference, gap } = await recompute(options.read, sizes, stored, options.progress);
  const where =
    firstDifference !== undefined
      ? `the first position that differs is ${firstDifference}`
      : 'the first position that differs cannot be told: the read models were rebuilt from this log';
  for (const { kept, checkpoint } of wanted) {
    const root = rootsAt.get(checkpoint.size);
    const detail =
      root === undefined
        ? `it has ${checkpoint.size} events, the log only ${frontier.size}: events were removed; ${where}`
        : root.equals(checkpoint.root)
          ? `size ${checkpoint.size}: the log extends it`
          : `the log's first ${checkpoint.size} events differ from it; ${where}`;
    findings.push({ subject: kept.name, ok: root?.equals(checkpoint.root) ?? false, detail });
  }
  if (stored) {
    const subject = "the service's latest checkpoint (its read models)";
    const root = rootsAt.get(stored.size);
    const holds = root !== undefined && stored.root(stored.size).equals(root) && firstDifference === undefined;
    const detail = holds
      ? `size ${stored.size}: the log holds it`
      : `size ${stored.size}: the log does not hold what the service signed; ${where}`;
    findings.push({ subject, ok: holds, detail });
  }
  if (gap) findings.push({ subject: 'the log', ok: false, detail: gap });
  return { events: frontier.size, root: frontier.root(), firstDifference, findings };
}
