import { logged, type RecordedEvent } from '../application/service.js';
import { CONFIG_STREAM, type LoggedEvent } from '../domain/shared/types.js';
import { Frontier, GROUP_LEAVES, GROUP_LEVEL, type Hash, leafHash } from '../engine/merkle.js';
import { type Checkpoint, NoteError, openNote, parseCheckpoint, type VerifierKey } from '../engine/signed-note.js';
import { leafText } from './leaves.js';

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

/**
 * The tree as the service keeps it (its read models): its size, its subtrees of GROUP_LEAVES leaves (it
 * keeps no leaf), and where, among some events, the first one differs from the record the read
 * models keep of it (undefined when none of them can be told apart).
 */
export interface StoredTree {
  size: number;
  /** The hash of leaves [index·GROUP_LEAVES, (index+1)·GROUP_LEAVES), undefined if not kept. */
  group(index: number): Hash | undefined;
  /** The root of its `size` leaves, as it signs it. */
  root: Hash;
  locate(events: LoggedEvent[]): number | undefined;
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
  /** When only its group of GROUP_LEAVES is known: the first and last positions it lies between. */
  firstDifferenceWithin?: [number, number];
  findings: Finding[];
}

/** Reads the log in the order of its stored positions: batches after the stored position `after`, empty at its end. */
export type LogReader = (after: number, maxCount: number) => Promise<RecordedEvent[]>;

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

/** Where the first difference lies: the log's own gaps, then the stored groups of leaves. */
class Difference {
  position?: number;
  within?: [number, number];
  gap?: string;

  get found(): boolean {
    return this.position !== undefined || this.within !== undefined;
  }

  /** A group of events (from `start`, a position) whose hash is not the stored one. */
  group(start: number, events: LoggedEvent[], stored: StoredTree): void {
    if (this.found) return;
    this.position = stored.locate(events);
    if (this.position === undefined) this.within = [start, start + events.length - 1];
  }
}

/**
 * The tree made again from the log: its roots at `sizes`, and where it first differs from the stored
 * one. The events are read in the order of their stored positions, and the k-th is leaf k − 1 with
 * position k in its bytes: an event moved (its stored position changed, its revision kept) no longer
 * follows its revision, which names the first position that differs, and its leaf changes the root.
 */
async function recompute(read: LogReader, sizes: Set<number>, stored?: StoredTree, progress?: (n: number) => void) {
  const rootsAt = new Map<number, Hash>();
  const frontier = new Frontier();
  if (sizes.has(0)) rootsAt.set(0, frontier.root());
  const difference = new Difference();
  // The events of the stored tree's last group, when it was not complete: its root needs them.
  const tail = stored ? stored.size - (stored.size % GROUP_LEAVES) : 0;
  const storedTail: LoggedEvent[] = [];
  let group: LoggedEvent[] = [];
  for (let after = 0; ; ) {
    const events = await read(after, BATCH);
    for (const recorded of events) {
      after = recorded.position;
      if (recorded.stream !== CONFIG_STREAM) continue;
      const position = frontier.size + 1;
      if (recorded.revision !== frontier.size && difference.gap === undefined) {
        difference.gap = `position ${position} holds the event of revision ${recorded.revision}: an event was removed, inserted or moved`;
        if (!difference.found) difference.position = position;
      }
      const event = logged(recorded);
      group.push(event);
      if (stored && position > tail && position <= stored.size) storedTail.push(event);
      const made = frontier.append(leafHash(leafText(event, position)));
      const subtree = made.find((node) => node.level === GROUP_LEVEL);
      if (stored && subtree && (subtree.index + 1) * GROUP_LEAVES <= stored.size) {
        const kept = stored.group(subtree.index);
        if (!kept?.equals(subtree.hash)) difference.group(position - GROUP_LEAVES + 1, group, stored);
      }
      if (subtree) group = [];
      if (sizes.has(frontier.size)) rootsAt.set(frontier.size, frontier.root());
    }
    progress?.(frontier.size);
    if (events.length < BATCH) break;
  }
  if (stored && !difference.found) {
    // The last group, not complete when the service signed: its events against the signed root.
    const root = rootsAt.get(stored.size);
    if (root && !stored.root.equals(root) && stored.size > tail) difference.group(tail + 1, storedTail, stored);
    else if (stored.size > frontier.size) difference.position = frontier.size + 1;
  }
  return { frontier, rootsAt, difference };
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
  const { frontier, rootsAt, difference } = await recompute(options.read, sizes, stored, options.progress);
  const firstDifference = difference.position;
  const where =
    firstDifference !== undefined
      ? `the first position that differs is ${firstDifference}`
      : difference.within
        ? `the first position that differs is between ${difference.within[0]} and ${difference.within[1]}`
        : stored
          ? 'the first position that differs cannot be told: the read models were rebuilt from this log'
          : "the first position that differs cannot be told from a checkpoint alone (the service's read models keep the tree that tells it)";
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
    const holds = root !== undefined && stored.root.equals(root) && !difference.found;
    const detail = holds
      ? `size ${stored.size}: the log holds it`
      : `size ${stored.size}: the log does not hold what the service signed; ${where}`;
    findings.push({ subject, ok: holds, detail });
  }
  if (difference.gap) findings.push({ subject: 'the log', ok: false, detail: difference.gap });
  return {
    events: frontier.size,
    root: frontier.root(),
    firstDifference,
    firstDifferenceWithin: difference.within,
    findings,
  };
}
