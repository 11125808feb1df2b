import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request a receiver took: its headers, body and when it came. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** `change.position` of the body. */
  position: number;
}

/** How the receiver answers the nth request (from 0): a status, after a delay. */
export type Behaviour = (
  n: number,
  received: Received,
) => { status: number; delayMs?: number; headers?: Record<string, string> };

/** A webhook receiver on 127.0.0.1, port 0, that records what it is sent and answers as `behaviour` says. */
export class Receiver {
  readonly received: Received[] = [];
  private server?: Server;
  behaviour: Behaviour = () => ({ status: 204 });
  url = '';

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const got: Received = {
          headers: req.headers,
          body,
          at: Date.now(),
          position: JSON.parse(body).change.position,
        };
        const { status, delayMs, headers } = this.behaviour(this.received.length, got);
        this.received.push(got);
        setTimeout(() => {
          res.statusCode = status;
          for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
          res.end();
        }, delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  /** The positions received, in the order they came. */
  positions(): number[] {
    return this.received.map((r) => r.position);
  }

  async until(done: (received: Received[]) => boolean, limitMs = 30_000): Promise<void> {
    const until = Date.now() + limitMs;
    while (!done(this.received)) {
      if (Date.now() > until) throw new Error(`the receiver still waits: got ${JSON.stringify(this.positions())}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * A token made by the token command while services run: each of them knows it once it has followed
 * the command's append (they poll the store); waits for that, at most 5 s.
 */
export async function tokenKnown(urls: string[], token: string): Promise<Record<string, string>> {
  const headers = { Authorization: `Bearer ${token}` };
  for (const url of urls) {
    for (let i = 0; i < 100; i++) {
      const reply = await fetch(`${url}/fr/api/whoami`, { headers });
      await reply.arrayBuffer();
      if (reply.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return headers;
}

/** Checks a Standard Webhooks signature as a receiver would, with the rule's `whsec_` secret. */
export function signatureValid(secret: string, received: Received): boolean {
  const id = received.headers['webhook-id'] as string;
  const timestamp = received.headers['webhook-timestamp'] as string;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.body}`).digest();
  const signatures = String(received.headers['webhook-signature']).split(' ');
  return signatures.some((one) => {
    const [version, value] = one.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
