import { Subscribers } from '../catch-up.js';
import {
  type AppendResult,
  checkExpected,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type OnEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StoreDescription,
  type Subscription,
} from '../port.js';

const copy = <T>(value: T): T => structuredClone(value);

/** For unit tests: the whole log in an array, with the same rules as the durable stores. */
export class InMemoryEventStore implements EventStore {
  readonly name = 'in-memory';
  private readonly log: RecordedEvent[] = [];
  private readonly streams = new Map<string, RecordedEvent[]>();
  private readonly subscribers = new Subscribers();

  describe(): StoreDescription {
    return { store: this.name, location: 'memory', durability: 'none: for tests only' };
  }

  async append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    const existing = this.streams.get(stream) ?? [];
    checkExpected(stream, expected, existing.length === 0 ? undefined : existing.length - 1);
    for (const event of events) {
      const recorded: RecordedEvent = {
        stream,
        revision: existing.length,
        position: this.log.length + 1,
        ...copy(event),
      };
      existing.push(recorded);
      this.log.push(recorded);
    }
    this.streams.set(stream, existing);
    this.subscribers.wakeAll();
    return { nextRevision: existing.length - 1 };
  }

  async head(stream: string): Promise<number> {
    return (this.streams.get(stream)?.length ?? 0) - 1;
  }

  async readStream(
    stream: string,
    { fromRevision = 0, maxCount = Infinity }: ReadStreamOptions = {},
  ): Promise<RecordedEvent[]> {
    return copy((this.streams.get(stream) ?? []).slice(fromRevision, fromRevision + maxCount));
  }

  async readAll({ after = 0, maxCount = Infinity }: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return copy(this.log.filter((e) => e.position > after).slice(0, maxCount));
  }

  subscribe(
    stream: string,
    fromRevision: number,
    onEvent: OnEvent,
    onError: (e: Error) => void = () => {},
  ): Subscription {
    return this.subscribers.add(
      stream,
      (from) => this.readStream(stream, { fromRevision: from }),
      fromRevision,
      onEvent,
      onError,
    );
  }

  async close(): Promise<void> {
    await this.subscribers.closeAll();
  }
}
