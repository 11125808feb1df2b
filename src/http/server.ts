import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { HttpLimits } from '../config.js';
import { type GuardedConnections, guardConnections } from './connections.js';

/** The HTTP server of an instance, and its connections guarded against slow and idle clients. */
export interface Listening {
  server: Server;
  connections: GuardedConnections;
}

/**
 * Node's own guards against slow clients, with shorter defaults than Node's (60 s for headers, 5 min
 * for a request), checked every second rather than every 30 s.
 */
function serverOptions(limits: HttpLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
  };
}

/** Listens on `host:port`; rejects at once when it cannot (the address in use, a port not allowed). */
export async function listen(
  limits: HttpLimits,
  port: number,
  host: string,
  callback: RequestListener,
): Promise<Listening> {
  const server = createServer(serverOptions(limits), callback);
  const connections = guardConnections(server, limits);
  server.listen(port, host);
  try {
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  } catch (error) {
    server.close();
    throw error;
  }
  return { server, connections };
}

/**
 * Stops taking connections and resolves once every request in flight is answered: idle connections
 * are closed now (those that never sent a request too: Node's own list leaves them), and `beforeIdle`
 * (the live feeds, which would hold theirs open) is called first.
 */
export function stopListening({ server, connections }: Listening, beforeIdle: () => void): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  beforeIdle();
  server.closeIdleConnections();
  connections.closeIdle();
  return closed;
}
