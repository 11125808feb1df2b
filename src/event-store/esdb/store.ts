import {
  ANY,
  BACKWARDS,
  DeadlineExceededError,
  END,
  type RecordedEvent as EsdbRecordedEvent,
  EventStoreDBClient,
  FORWARDS,
  type JSONType,
  jsonEvent,
  NO_STREAM,
  NotLeaderError,
  START,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import {
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type OnEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StoreDescription,
  StoreUnavailable,
  type Subscription,
  WrongExpectedRevision,
} from '../port.js';

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    stream: event.streamId,
    revision: Number(event.revision),
    // The prepare position: unique per event (events of one append share their commit position).
    // Events read from a stream carry it on EventStoreDB 22+.
    position: event.position ? Number(event.position.prepare) : Number(event.revision) + 1,
    type: event.type,
    data: event.data,
    metadata: (event.metadata ?? {}) as Record<string, unknown>,
  };
}

function translate(error: unknown, stream?: string, expected?: ExpectedRevision): Error {
  if (error instanceof WrongExpectedVersionError) {
    const actual = error.actualVersion;
    return new WrongExpectedRevision(
      stream ?? error.streamName,
      expected ?? 'any',
      typeof actual === 'bigint' ? Number(actual) : 'no_stream',
    );
  }
  if (error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof NotLeaderError) {
    return new StoreUnavailable(`EventStoreDB: ${(error as Error).message}`, { cause: error });
  }
  return error as Error;
}

/**
 * EventStoreDB / KurrentDB through the official gRPC client. Revisions map one to one; an expected
 * revision of the port becomes the append's `expectedRevision` (a bigint, `no_stream` or `any`).
 */
export class EsdbEventStore implements EventStore {
  readonly name = 'eventstoredb';
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<Subscription>();

  constructor(private readonly connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  describe(): StoreDescription {
    const hosts = this.connectionString.replace(/^[a-z+]+:\/\/([^@/]*@)?/, '').split(/[/?]/)[0];
    return {
      store: this.name,
      location: hosts,
      durability: 'written by a quorum of the cluster before an append returns',
    };
  }

  async append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    // A negative revision means "no event yet", as `no_stream` does.
    const expectedRevision =
      expected === 'any' ? ANY : expected === 'no_stream' || expected < 0 ? NO_STREAM : BigInt(expected);
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) => jsonEvent({ type: e.type, data: e.data as JSONType, metadata: e.metadata as JSONType })),
        { expectedRevision },
      );
      return { nextRevision: Number(result.nextExpectedRevision) };
    } catch (error) {
      throw translate(error, stream, expected);
    }
  }

  async readStream(stream: string, { fromRevision = 0, maxCount }: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      const reading = this.client.readStream(stream, {
        fromRevision: BigInt(fromRevision),
        direction: FORWARDS,
        ...(maxCount === undefined ? {} : { maxCount }),
      });
      for await (const resolved of reading)
        if (resolved.event) events.push(toRecorded(resolved.event as EsdbRecordedEvent));
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw translate(error);
    }
    return events;
  }

  async head(stream: string): Promise<number> {
    try {
      for await (const resolved of this.client.readStream(stream, {
        fromRevision: END,
        direction: BACKWARDS,
        maxCount: 1,
      }))
        if (resolved.event) return Number(resolved.event.revision);
    } catch (error) {
      if (error instanceof StreamNotFoundError) return -1;
      throw translate(error);
    }
    return -1;
  }

  /**
   * `$all` without EventStoreDB's own system events. It reads from the start and skips up to `after`:
   * a port position is one number, and seeking `$all` needs an exact (commit, prepare) pair. The
   * service itself never reads `$all` (it follows its stream); a global change feed will want a
   * position type that carries both.
   */
  async readAll({ after, maxCount }: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readAll({ fromPosition: START, direction: FORWARDS })) {
        const event = resolved.event;
        if (!event || event.streamId.startsWith('$') || event.type.startsWith('$')) continue;
        const recorded = toRecorded(event as EsdbRecordedEvent);
        if (after !== undefined && recorded.position <= after) continue;
        events.push(recorded);
        if (maxCount !== undefined && events.length >= maxCount) break;
      }
    } catch (error) {
      throw translate(error);
    }
    return events;
  }

  subscribe(
    stream: string,
    fromRevision: number,
    onEvent: OnEvent,
    onError: (e: Error) => void = () => {},
  ): Subscription {
    // A catch-up subscription starts *after* the revision it is given.
    const subscription = this.client.subscribeToStream(stream, {
      fromRevision: fromRevision === 0 ? START : BigInt(fromRevision - 1),
    });
    subscription.on('data', (resolved) => {
      if (resolved.event) onEvent(toRecorded(resolved.event as EsdbRecordedEvent));
    });
    subscription.on('error', (error) => onError(translate(error)));
    const handle: Subscription = {
      close: async () => {
        this.subscriptions.delete(handle);
        await subscription.unsubscribe();
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  async close(): Promise<void> {
    for (const subscription of [...this.subscriptions]) await subscription.close();
    await this.client.dispose();
  }
}
