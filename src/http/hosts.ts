import { isIP } from 'node:net';
import { hostMatches } from '../config.js';

/** Whether a request's `Host` header names this service. */
export type HostCheck = (host: string | undefined) => boolean;

/** The names every instance answers to, whatever it listens on. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** A wildcard listen address: the service is reached through any of the machine's addresses. */
const isWildcard = (address: string) => address === '' || address === '0.0.0.0' || address === '::';

/** `name[:port]` or `[v6]:port` → the name, lower-cased, without brackets; undefined when malformed. */
export function hostName(header: string): string | undefined {
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::\d{1,5})?$/.exec(header);
  if (bracketed) return bracketed[1].toLowerCase();
  const plain = /^([A-Za-z0-9._-]+)(?::\d{1,5})?$/.exec(header);
  return plain?.[1].toLowerCase().replace(/\.$/, '');
}

/** One ALLOWED_HOSTS entry: a name, or `*.domain` for any name below that domain. */
const matcher =
  (pattern: string) =>
  (name: string): boolean =>
    hostMatches(pattern, name);

/**
 * The Host check against DNS rebinding (a page of attacker.example, whose name was made to point
 * at this machine, calling the API): only names this service answers to. By default the listen
 * address, `localhost`, `127.0.0.1` and `[::1]`; when it listens on every address (`0.0.0.0`),
 * also any IP address, since a rebinding needs a name; `allowed` adds names (`*.example.net`).
 * The port is not compared: a published port (Docker, a load balancer) differs from the one
 * listened on, and the name is what a rebinding forges. A request without Host (HTTP/1.0) cannot
 * come from a browser and is let through.
 */
export function hostCheck(listenAddress: string, allowed: readonly string[] = []): HostCheck {
  const names = new Set(LOOPBACK_NAMES);
  if (!isWildcard(listenAddress)) names.add(listenAddress.toLowerCase().replace(/^\[|\]$/g, ''));
  const patterns = allowed.map(matcher);
  const anyAddress = isWildcard(listenAddress);
  return (header) => {
    if (header === undefined || header === '') return true;
    const name = hostName(header);
    if (name === undefined) return false;
    if (names.has(name) || patterns.some((matches) => matches(name))) return true;
    return anyAddress && isIP(name) !== 0;
  };
}
