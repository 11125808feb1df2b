import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A body made piece by piece as the client reads it, one piece per turn of the event loop. Node's
 * `Readable.from` pulls a synchronous iterator in one turn for as long as the socket takes the
 * bytes: a client on a fast link took a list of 100,000 servers (49 MB) in one go, and every
 * other request waited the 4 s it took to make. Here the requests that came meanwhile are served
 * between two pieces; a slow client still holds the pieces back as before (backpressure).
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
