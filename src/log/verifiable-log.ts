import { type ConfigService, type EventStore, logged } from '../application/service.js';
import { CONFIG_STREAM } from '../domain/shared/types.js';
import {
  consistencyProof,
  GROUP_LEAVES,
  type Hash,
  inclusionProof,
  leafHash,
  type NodeReader,
  rootAt,
} from '../engine/merkle.js';
import { checkpointText, formatVerifier, type SignerKey, signNote } from '../engine/signed-note.js';
import { leafBytes, leafText } from './leaves.js';

/** An inclusion proof as the API gives it (RFC 9162 §2.1.3 audit path, hex). */
export interface InclusionProof {
  position: number;
  size: number;
  leaf_hash: string;
  hashes: string[];
}

/** A consistency proof as the API gives it (RFC 9162 §2.1.4, hex). */
export interface ConsistencyProof {
  from: number;
  to: number;
  hashes: string[];
}

/** A position or size outside the log as it is now. */
export class OutsideTheLog extends Error {
  override name = 'OutsideTheLog';
}

/** A leaf hash a proof needs and has not been read yet (see VerifiableLog.tree). */
class LeafNotRead extends Error {
  constructor(readonly index: number) {
    super(`leaf ${index} not read`);
  }
}

/**
 * `ask`'s answer, given the leaf hashes it needs, made again from the store's events (the read
 * models keep none): a first try names the leaf it lacks, whose group of 16 is read, and so on (a
 * proof needs at most the group of its position and the last group of its tree).
 */
export async function withLeaves<T>(
  store: EventStore,
  size: number,
  ask: (leaf: (index: number) => Hash) => T | Promise<T>,
): Promise<T> {
  const leaves = new Map<number, Hash>();
  const leaf = (index: number) => {
    const hash = leaves.get(index);
    if (!hash) throw new LeafNotRead(index);
    return hash;
  };
  for (;;) {
    try {
      return await ask(leaf);
    } catch (error) {
      if (!(error instanceof LeafNotRead)) throw error;
      const from = error.index - (error.index % GROUP_LEAVES);
      const count = Math.min(GROUP_LEAVES, size - from);
      const events = await store.readStream(CONFIG_STREAM, { fromRevision: from, maxCount: count });
      for (const event of events) leaves.set(event.revision, leafHash(leafText(logged(event))));
      if (!leaves.has(error.index)) throw new OutsideTheLog(`the log has no event at position ${error.index + 1}`);
    }
  }
}

/**
 * The log anyone can verify: the Merkle tree over every event (the projector grows it as it folds,
 * the read models keep its nodes), its checkpoint signed with the log's key, its leaves and proofs.
 * Every instance over one log serves the same tree, and signs with the same key: the same
 * checkpoint at the same size (Ed25519 signatures are deterministic).
 */
export class VerifiableLog {
  private signed?: { size: number; note: string };

  constructor(
    private readonly key: SignerKey,
    private readonly service: ConfigService,
  ) {}

  /** The origin line of every checkpoint: `pmacontrol-config/<log id>`. */
  get origin(): string {
    return this.key.name;
  }

  /** The number of leaves: every event folded here. */
  get size(): number {
    return this.service.projector.tree.size;
  }

  /** The verifier key (C2SP note form) that checks every checkpoint. */
  publicKey(): string {
    return formatVerifier(this.key);
  }

  /** The checkpoint of the log as folded here, signed; made once per size. */
  checkpoint(): string {
    const size = this.size;
    if (this.signed?.size !== size) {
      const text = checkpointText({ origin: this.origin, size, root: this.service.projector.tree.root() });
      this.signed = { size, note: signNote(text, this.key) };
    }
    return this.signed.note;
  }

  /** The leaf bytes of the event at `position` (1 … size), read from the store. */
  async leaf(position: number): Promise<Buffer> {
    this.within(position, this.size, 'position');
    const [event] = await this.service.eventStore.readStream(CONFIG_STREAM, {
      fromRevision: position - 1,
      maxCount: 1,
    });
    if (!event) throw new OutsideTheLog(`the log has no event at position ${position}`);
    return leafBytes(logged(event));
  }

  /** The audit path of the event at `position` in the tree of the first `size` events. */
  async inclusion(position: number, size = this.size): Promise<InclusionProof> {
    this.within(size, this.size, 'size');
    this.within(position, size, 'position', 'size');
    return this.tree((node) => ({
      position,
      size,
      leaf_hash: node(0, position - 1).toString('hex'),
      hashes: inclusionProof(position - 1, size, node).map((hash) => hash.toString('hex')),
    }));
  }

  /** The proof that the tree of the first `from` events is a prefix of the tree of the first `to`. */
  async consistency(from: number, to: number): Promise<ConsistencyProof> {
    this.within(to, this.size, 'to');
    this.within(from, to, 'from', 'to');
    return this.tree((node) => ({
      from,
      to,
      hashes: consistencyProof(from, to, node).map((hash) => hash.toString('hex')),
    }));
  }

  /** The root of the first `size` events, from the stored tree. */
  root(size: number): Promise<Buffer> {
    this.within(size, this.size, 'size');
    return this.tree((node) => rootAt(size, node));
  }

  private tree<T>(use: (node: NodeReader) => T): Promise<T> {
    this.service.projector.flush();
    const { eventStore, readModels } = this.service;
    return withLeaves(eventStore, this.size, (leaf) => readModels.withTree(use, leaf));
  }

  /** `value` is from 1 to `upTo`: the log's size now, or (`bound`) another value of the request. */
  private within(value: number, upTo: number, name: string, bound?: string): void {
    if (value >= 1 && value <= upTo) return;
    throw new OutsideTheLog(
      bound === undefined
        ? `${name} ${value} is outside the log: from 1 to ${upTo} as it is now`
        : `${name} ${value} must be from 1 to ${bound} (${upTo}); the log holds ${this.size} events`,
    );
  }
}
