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

/** What the guard gives back: a way to close every connection with no request in flight (a stop). */
export interface GuardedConnections {
  closeIdle(): void;
}

/**
 * Guards the server's connections against clients taking them all. A new connection past a limit
 * takes the place of the one idle longest (no request in flight: a silent socket, a keep-alive one)
 * — past `maxConnectionsPerClient`, one of the same client address; past `maxConnections`, any —
 * and is closed only when every one it could replace has a request in flight. So a health check or
 * an ordinary request always gets in past sockets opened and left silent, even from the address
 * that opened them (a load balancer, a NAT). Live feeds, always in flight, have their own cap below
 * the limit (MAX_SUBSCRIBERS).
 */
export function guardConnections(server: Server, limits: ConnectionLimits): GuardedConnections {
  const held = new Map<Socket, Held>();
  const perClient = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? '';
    const full =
      ((perClient.get(client) ?? 0) >= limits.maxConnectionsPerClient && !closeIdlest(held, perClient, client)) ||
      (held.size >= limits.maxConnections && !closeIdlest(held, perClient));
    if (full) {
      socket.destroy();
      return;
    }
    perClient.set(client, (perClient.get(client) ?? 0) + 1);
    held.set(socket, { client, busy: 0, idleSince: performance.now() });
    socket.once('close', () => {
      if (held.has(socket)) forget(held, perClient, socket);
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
  return {
    // Node's own close stops timing out silent sockets: they would hold the process for ever.
    closeIdle: () => {
      for (const [socket, state] of held) if (state.busy === 0) socket.destroy();
    },
  };
}

/** Takes a connection off the counts. */
function forget(held: Map<Socket, Held>, perClient: Map<string, number>, socket: Socket): void {
  const { client } = held.get(socket)!;
  held.delete(socket);
  const left = (perClient.get(client) ?? 1) - 1;
  if (left === 0) perClient.delete(client);
  else perClient.set(client, left);
}

/**
 * Closes the connection idle longest (no request in flight), of `client` if given; false when there
 * is none. It is taken off the counts at once (its 'close' event comes later).
 */
function closeIdlest(held: Map<Socket, Held>, perClient: Map<string, number>, client?: string): boolean {
  let idlest: [Socket, Held] | undefined;
  for (const entry of held) {
    if (entry[1].busy > 0 || (client !== undefined && entry[1].client !== client)) continue;
    if (!idlest || entry[1].idleSince < idlest[1].idleSince) idlest = entry;
  }
  if (!idlest) return false;
  forget(held, perClient, idlest[0]);
  idlest[0].destroy();
  return true;
}
