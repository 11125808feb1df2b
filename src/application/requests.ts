import { createHmac, hkdfSync } from 'node:crypto';
import type { RequestRow } from '../../projections/changes.js';
import { DomainError } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { Projected } from './projector.js';
import type { SecretBox } from './secrets.js';

/** A write's answer as sent, kept (sealed) with the events it caused so that a retry gets it again. */
export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What the client sent: its key, and a keyed digest of the method, path and body (which may hold secrets). */
export interface Idempotency {
  key: string;
  fingerprint: string;
}

/** How long a recorded answer is given again. */
export const WINDOW_MS = 24 * 60 * 60 * 1000;

const REUSED = 'this Idempotency-Key was used with another method, path or body';

/** A 422 like every other: its one problem names the header. */
export class KeyReused extends DomainError {
  constructor() {
    super(422, 'idempotency_key_reused', REUSED, {
      errors: [{ field: 'Idempotency-Key', code: 'reused', message: REUSED }],
    });
  }
}

export class InFlight extends DomainError {
  constructor() {
    super(409, 'conflict', 'a request with this Idempotency-Key is still being processed; retry in a moment');
  }
}

const slot = (actor: string, key: string) => `${actor}\u0000${key}`;

/**
 * Idempotency-Key: the requests recorded in the log (per actor), so that every instance, also after a
 * restart, answers a retry with the first answer. Fed by the projector; a request is recorded in the
 * same append as its events, so a retry decided on another instance finds it once it caught up.
 */
export class RequestLog {
  private readonly recorded = new Map<string, RequestRow>();
  private readonly inFlight = new Set<string>();
  private readonly fingerprintKey: Buffer;

  constructor(
    private readonly secrets: SecretBox,
    key: Buffer,
  ) {
    this.fingerprintKey = Buffer.from(hkdfSync('sha256', key, '', 'pmacontrol-config/request-fingerprint', 32));
  }

  /** A keyed digest: equal requests give equal fingerprints; the body's secrets cannot be read back. */
  fingerprint(method: string, path: string, body: string): string {
    return createHmac('sha256', this.fingerprintKey).update(`${method}\n${path}\n${body}`).digest('hex');
  }

  load(rows: Iterable<RequestRow>): void {
    for (const row of rows) this.keep(row);
  }

  /** For the projector: keeps the requests recorded in a batch, and forgets those past the window. */
  readonly update = (batch: Projected[]): void => {
    let latest: string | undefined;
    for (const { request } of batch) {
      if (!request) continue;
      this.keep(request);
      latest = request.at;
    }
    if (latest) this.forgetBefore(Date.parse(latest) - WINDOW_MS);
  };

  /** Kept in the order recorded (a key used again moves to the end), so the oldest are first. */
  private keep(row: RequestRow): void {
    const id = slot(row.actor, row.key);
    this.recorded.delete(id);
    this.recorded.set(id, row);
  }

  private forgetBefore(time: number): void {
    for (const [id, row] of this.recorded) {
      if (Date.parse(row.at) >= time) return;
      this.recorded.delete(id);
    }
  }

  /** The first answer to this request, if it was recorded within the window; 422 if the key was used otherwise. */
  find(actor: string, idempotency: Idempotency, now: Date): RecordedResponse | undefined {
    const row = this.recorded.get(slot(actor, idempotency.key));
    if (!row || Date.parse(row.at) < now.getTime() - WINDOW_MS) return undefined;
    if (row.fingerprint !== idempotency.fingerprint) throw new KeyReused();
    const plain = this.secrets.tryOpen(row.response as Sealed);
    return plain === undefined ? undefined : (JSON.parse(plain) as RecordedResponse);
  }

  /** What goes in the metadata of the request's last event. */
  note(idempotency: Idempotency, response: RecordedResponse): { key: string; fingerprint: string; response: string } {
    return { ...idempotency, response: this.secrets.seal(JSON.stringify(response)) };
  }

  /** Marks the request as being processed on this instance; 409 if it already is. */
  begin(actor: string, key: string): () => void {
    const id = slot(actor, key);
    if (this.inFlight.has(id)) throw new InFlight();
    this.inFlight.add(id);
    return () => this.inFlight.delete(id);
  }
}
