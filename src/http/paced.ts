import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A body made piece by piece as the client reads it, one piece per turn of the event loop: Node's
 * `Readable.from` would pull a synchronous iterator in one turn for as long as a fast socket takes
 * the bytes, holding every other request (bench/http.ts, lists at 100,000 servers). A slow client
 * still holds the pieces back (backpressure).
 */
export function pacedBody(pieces: Iterable<string | Buffer> | AsyncIterable<string | Buffer>): Readable {
  async function* oneATurn() {
    let first = true;
    for await (const piece of pieces) {
      if (!first) await nextTurn();
      first = false;
      yield piece;
    }
  }
  return Readable.from(oneATurn(), { objectMode: false });
}
