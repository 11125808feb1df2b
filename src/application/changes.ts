import type { ChangeItem, HistoryItem } from '../../projections/changes.js';
import { diffedFields, redactDiff } from '../domain/redact.js';
import { CONFIGURATION_NAMES, type ResourceName, resourceOf } from '../domain/resources.js';
import { type DiffMember, fieldDiff } from '../domain/shared/diff.js';
import { Deleted, NotFound } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { ConfigState } from '../domain/state.js';
import type { EntryRecord } from '../engine/table.js';
import { Turns } from '../engine/turns.js';
import type { AuditReader, ChangeQuery, EntryThen } from '../read-models/port.js';

/** A moment of the log: a position, or a time (ISO 8601, UTC). */
export type Moment = { position: number } | { time: string };

/** The position a time-travel answer is given as of, and when that event happened. */
export interface AsOf {
  position: number;
  /** Null for position 0: before the first event. */
  at: string | null;
}

export interface ResourceDiff {
  created: EntryRecord[];
  updated: { id: number; diff: DiffMember[] }[];
  deleted: number[];
}

/** The net change between two moments: its bounds now, each resource's part as it is worked out. */
export interface DiffReport {
  from: AsOf;
  to: AsOf;
  resources: AsyncIterable<[ResourceName, ResourceDiff]>;
}

/**
 * Above this many entries of one resource changed between two moments, or above a tenth of the
 * resource, whole lists are compared: an entry read alone folds its versions from its last snapshot,
 * a list at a moment folds from the list's (bench/history.ts, a month's differences: 200 tags of
 * 3,000 versions each read one by one took 2.5 s).
 */
const WHOLE_LIST = 200;

/**
 * The auditor's questions: the change log, the configuration as it was at a moment, and what changed
 * between two moments. Everything comes from what the projector stored as it folded each event
 * (`flush` hands it what waits first); nothing rescans the log, and no answer holds the event loop.
 */
export class Changes {
  constructor(
    private readonly reader: AuditReader,
    /** Hands the read models what the projector folded and has not saved yet. */
    private readonly flush: () => void,
    private readonly current: () => ConfigState,
    /** The secret a sealed value holds (undefined: it does not open): secrets compare by what they hold. */
    private readonly open: (sealed: Sealed) => string | undefined = () => undefined,
  ) {}

  private get head(): number {
    return this.current().revision + 1;
  }

  private stored(): AuditReader {
    this.flush();
    return this.reader;
  }

  /** The position a moment stands for: a position past the last event, or a later time, is the head. */
  async resolve(moment: Moment): Promise<AsOf> {
    const reader = this.stored();
    const position = 'position' in moment ? Math.min(moment.position, this.head) : await reader.positionAt(moment.time);
    const at = position === 0 ? null : ((await reader.timeOf(position)) ?? null);
    return { position, at };
  }

  changes(query: ChangeQuery): AsyncIterable<ChangeItem> {
    return this.stored().changes(query);
  }

  history(resource: ResourceName, id: number): Promise<HistoryItem[]> {
    return this.stored().history(resource, id);
  }

  /** The entry as it was at `version` (secrets sealed), or undefined if it never had that version. */
  versionOf(resource: ResourceName, id: number, version: number): Promise<EntryRecord | undefined> {
    return this.stored().versionOf(resource, id, version);
  }

  /** One entry as it was; 404 `not_found` if it did not exist yet, `deleted` if it was hard-deleted then. */
  async entryAt(resource: ResourceName, id: number, moment: Moment): Promise<{ entry: EntryRecord; asOf: AsOf }> {
    const asOf = await this.resolve(moment);
    const then = await this.entryThen(resource, id, asOf.position);
    if (!then) throw new NotFound(resource, id);
    if ('deleted' in then) throw new Deleted(resource, id);
    return { entry: then.entry, asOf };
  }

  /** Every entry of a resource as it was (soft-deleted ones included), in id order. */
  async listAt(resource: ResourceName, moment: Moment): Promise<{ entries: readonly EntryRecord[]; asOf: AsOf }> {
    const asOf = await this.resolve(moment);
    return { entries: await this.listThen(resource, asOf.position), asOf };
  }

  private listThen(resource: ResourceName, position: number): Promise<readonly EntryRecord[]> | readonly EntryRecord[] {
    return position === this.head
      ? this.current().collections[resource].inOrder()
      : this.stored().listAt(resource, position);
  }

  private async entryThen(resource: ResourceName, id: number, position: number): Promise<EntryThen> {
    if (position !== this.head) return this.stored().entryAt(resource, id, position);
    const col = this.current().collections[resource];
    const entry = col.get(id);
    return entry ? { entry } : col.tombstone(id) ? { deleted: true } : undefined;
  }

  /**
   * The net change between two moments, per resource: an entry changed and changed back is not
   * listed. Its bounds are resolved now; each resource's part is worked out as it is read (the
   * touched entries in one pass over the version rows, linear; whole lists compared past
   * WHOLE_LIST), a slice of the event loop at a time.
   */
  async diff(from: Moment, to: Moment): Promise<DiffReport> {
    const [start, end] = [await this.resolve(from), await this.resolve(to)];
    const touched =
      end.position > start.position ? await this.stored().touched(start.position, end.position) : new Map();
    const resources = async function* (this: Changes): AsyncIterable<[ResourceName, ResourceDiff]> {
      for (const name of CONFIGURATION_NAMES)
        yield [name, await this.resourceDiff(name, touched.get(name) ?? [], start, end)];
    };
    return { from: start, to: end, resources: resources.call(this) };
  }

  private async resourceDiff(resource: ResourceName, ids: number[], start: AsOf, end: AsOf): Promise<ResourceDiff> {
    const result: ResourceDiff = { created: [], updated: [], deleted: [] };
    const { before, after } = await this.entriesAround(resource, ids, start, end);
    const turns = new Turns();
    for (const id of ids) {
      const [was, is] = [before.get(id), after.get(id)];
      if (!was && is) result.created.push(is);
      else if (was && !is) result.deleted.push(id);
      else if (was && is) {
        const diff = this.changedSecretsOnly(resource, fieldDiff(diffedFields(resource), was, is));
        if (diff.length > 0) result.updated.push({ id, diff: redactDiff(resource, diff) });
      }
      await turns.pause();
    }
    return result;
  }

  /**
   * The given entries at both moments, as far as their net change needs. Past WHOLE_LIST, the stored
   * list at the start and memory's at the head; between two past moments, the stored version rows
   * between them (an entry there at both then holds only its changed fields: `netChanges`).
   */
  private async entriesAround(
    resource: ResourceName,
    ids: number[],
    start: AsOf,
    end: AsOf,
  ): Promise<{ before: Map<number, EntryRecord>; after: Map<number, EntryRecord> }> {
    if (this.wholeLists(resource, ids) && end.position !== this.head)
      return this.stored().netChanges(resource, ids, start.position, end.position);
    return { before: await this.entriesAt(resource, ids, start), after: await this.entriesAt(resource, ids, end) };
  }

  private wholeLists(resource: ResourceName, ids: number[]): boolean {
    return ids.length > Math.min(WHOLE_LIST, this.current().collections[resource].size / 10);
  }

  /** The given entries (in id order) as they were at a moment (hard-deleted or absent ones left out). */
  private async entriesAt(resource: ResourceName, ids: number[], asOf: AsOf): Promise<Map<number, EntryRecord>> {
    const found = new Map<number, EntryRecord>();
    if (this.wholeLists(resource, ids)) {
      const wanted = new Set(ids);
      for (const entry of await this.listThen(resource, asOf.position))
        if (wanted.has(entry.id)) found.set(entry.id, entry);
      return found;
    }
    for (const id of ids) {
      const then = await this.entryThen(resource, id, asOf.position);
      if (then && 'entry' in then) found.set(id, then.entry);
    }
    return found;
  }

  /**
   * A diff without the secrets that hold the same value on both sides, sealed twice (a key rotation
   * seals every secret again; an older revert sealed the same password again): not a change.
   */
  private changedSecretsOnly(resource: ResourceName, diff: DiffMember[]): DiffMember[] {
    const secrets = resourceOf(resource).secretFields;
    return diff.filter(({ field, before, after }) => {
      if (!secrets.includes(field) || typeof before !== 'string' || typeof after !== 'string') return true;
      const was = this.open(before as Sealed);
      return was === undefined || was !== this.open(after as Sealed);
    });
  }
}
