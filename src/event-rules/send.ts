import { createHmac } from 'node:crypto';
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { addressProblem, guardedLookup, type TargetPolicy, TargetRefused } from './target.js';

/** Answers are read up to this many bytes, then the connection is closed. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The Standard Webhooks signature of a body: `v1,` then base64 of HMAC-SHA256 over `id.timestamp.body`. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface Attempt {
  /** 2xx within the timeout. */
  delivered: boolean;
  status: number | null;
  error: string | null;
}

export interface Post {
  url: string;
  secret: string;
  id: string;
  body: string;
  timeoutMs: number;
  policy: TargetPolicy;
  /** The time to sign with (Unix seconds). */
  timestamp: number;
  /** Aborted when the instance stops: the attempt ends then, failed. */
  signal?: AbortSignal;
}

/** Reads the answer up to MAX_ANSWER_BYTES (the rest is not waited for) and says how it went. */
function outcome(response: IncomingMessage, done: (attempt: Attempt) => void): void {
  const status = response.statusCode ?? 0;
  let read = 0;
  const settle = () => {
    const delivered = status >= 200 && status < 300;
    const error = delivered
      ? null
      : status >= 300 && status < 400
        ? `answered ${status}: redirects are not followed`
        : `answered ${status}`;
    done({ delivered, status, error });
  };
  response.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > MAX_ANSWER_BYTES) {
      response.destroy();
      settle();
    }
  });
  response.on('end', settle);
  response.on('error', settle);
}

/** The target's URL, host and port; or why it cannot be sent to, for an address written in it. */
function targetOf(delivery: Post): { url: URL; host: string; port: number } | string {
  let url: URL;
  try {
    url = new URL(delivery.url);
  } catch {
    return 'the target URL is not a URL';
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  // An address written in the URL is connected to without a lookup: checked here.
  const literal = isIP(host) !== 0 ? addressProblem(host, host, port, delivery.policy) : undefined;
  return literal ?? { url, host, port };
}

/** The signed request, its connection made to the address the guarded lookup checked. */
function signedRequest(delivery: Post, target: { url: URL; host: string; port: number }): ClientRequest {
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return send(target.url, {
    method: 'POST',
    agent: false,
    lookup: guardedLookup(target.host, target.port, delivery.policy) as never,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'pmacontrol-config-webhooks',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(delivery.timestamp),
      'webhook-signature': signature(delivery.secret, delivery.id, delivery.timestamp, delivery.body),
      'content-length': String(Buffer.byteLength(delivery.body)),
    },
  });
}

/** One POST of a delivery, signed; never throws: a refusal, a timeout or an error is an attempt that failed. */
export function post(delivery: Post): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let request: ClientRequest | undefined;
    const stopped = () => fail('the instance stopped');
    const done = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      delivery.signal?.removeEventListener('abort', stopped);
      request?.destroy();
      resolve(attempt);
    };
    const fail = (error: string) => done({ delivered: false, status: null, error });
    const target = targetOf(delivery);
    if (typeof target === 'string') return fail(target);
    if (delivery.signal?.aborted) return stopped();
    timer = setTimeout(() => fail(`no answer within ${delivery.timeoutMs} ms`), delivery.timeoutMs);
    delivery.signal?.addEventListener('abort', stopped, { once: true });
    request = signedRequest(delivery, target);
    request.on('response', (response) => outcome(response, done));
    request.on('error', (error) =>
      fail(
        error instanceof TargetRefused
          ? error.message
          : `${(error as NodeJS.ErrnoException).code ?? 'error'}: ${error.message}`,
      ),
    );
    request.end(delivery.body);
  });
}
