import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Connections at once (Node refuses more at accept: `server.maxConnections`). */
  maxConnections: number;
  /** Connections one client address may hold at once. */
  maxConnectionsPerClient: number;
}

interface Held {
  client: string;
  /** Requests in flight on it (a live feed stays in flight). */
  busy: number;
  /** When it last became idle (or was accepted). */
  idleSince: number;
}

/**
 * Guards the server's connections against clients taking them all: a client address holds at most
 * `maxConnectionsPerClient` (more are closed as they arrive); at `maxConnections`, a new connection
 * takes the place of the one idle longest (no request in flight: a silent socket, a keep-alive one),
 * and is closed only when every connection has a request in flight. So a health check or an
 * ordinary request always gets in past sockets opened and left silent. Live feeds, always in flight,
 * have their own cap below the limit (MAX_SUBSCRIBERS).
 */
export function guardConnections(server: Server, limits: ConnectionLimits): void {
  const held = new Map<Socket, Held>();
  const perClient = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? '';
    const count = perClient.get(client) ?? 0;
    if (count >= limits.maxConnectionsPerClient || (held.size >= limits.maxConnections && !closeIdlest(held))) {
      socket.destroy();
      return;
    }
    perClient.set(client, count + 1);
    held.set(socket, { client, busy: 0, idleSince: performance.now() });
    socket.once('close', () => {
      held.delete(socket);
      const left = (perClient.get(client) ?? 1) - 1;
      if (left === 0) perClient.delete(client);
      else perClient.set(client, left);
    });
  });
  server.on('request', (request, response) => {
    const state = held.get(request.socket);
    if (!state) return;
    state.busy++;
    response.once('close', () => {
      state.busy--;
      state.idleSince = performance.now();
    });
  });
}

/** Closes the connection idle longest (no request in flight); false when there is none. */
function closeIdlest(held: Map<Socket, Held>): boolean {
  let idlest: [Socket, Held] | undefined;
  for (const entry of held)
    if (entry[1].busy === 0 && (!idlest || entry[1].idleSince < idlest[1].idleSince)) idlest = entry;
  if (!idlest) return false;
  idlest[0].destroy();
  held.delete(idlest[0]);
  return true;
}
