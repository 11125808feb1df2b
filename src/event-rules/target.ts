import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { hostMatches } from '../config.js';

/**
 * Where a rule may send (section 15): never a loopback, link-local, private or otherwise internal
 * address unless WEBHOOK_ALLOWED_HOSTS names the target's host, never this service itself. The
 * check is made on the address the name resolves to, at each delivery, by the connection's own
 * lookup: a name that resolves to a public address when the rule is written and to 127.0.0.1 at
 * delivery (DNS rebinding) is refused then.
 */

const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

/** An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is checked as the IPv4 one. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:([0-9.]+)$/i.exec(address);
  if (mapped) return { address: mapped[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Whether an address is loopback, link-local, private or otherwise not on the internet. */
export function isInternal(address: string): boolean {
  const { address: plain, family } = unmapped(address);
  return INTERNAL.check(plain, family);
}

/** Whether a host matches one of the patterns: the name itself, `*.suffix`, or an address. */
export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  const name = host
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  return patterns.some((pattern) => hostMatches(pattern, name));
}

/** The addresses of this machine, where the service listens (its own interfaces, and every unspecified one). */
function ownAddresses(): Set<string> {
  const own = new Set(['0.0.0.0', '::']);
  for (const list of Object.values(networkInterfaces())) for (const one of list ?? []) own.add(one.address);
  return own;
}

export class TargetRefused extends Error {}

export interface TargetPolicy {
  allowedHosts: readonly string[];
  /** The port this service listens on (a target at one of this machine's addresses on it is the service). */
  ownPort: () => number | undefined;
}

/** Why a target address may not be reached, or undefined. */
export function addressProblem(host: string, address: string, port: number, policy: TargetPolicy): string | undefined {
  const { address: plain } = unmapped(address);
  const internal = isInternal(plain);
  if (port === policy.ownPort() && (internal || ownAddresses().has(plain)))
    return `${host} is this service itself (${plain}:${port}): a rule cannot send to it`;
  if (internal && !hostAllowed(host, policy.allowedHosts))
    return `${host} resolves to ${plain}, an internal address: list ${host} in WEBHOOK_ALLOWED_HOSTS to allow it`;
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The lookup a delivery's connection uses: the name resolved, then the address checked, so that the
 * connection goes to the very address that was checked.
 */
export function guardedLookup(host: string, port: number, policy: TargetPolicy) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      for (const one of list) {
        const problem = addressProblem(host, one.address, port, policy);
        if (problem) return callback(new TargetRefused(problem) as NodeJS.ErrnoException, '');
      }
      const all = (options as { all?: boolean }).all;
      if (all) return callback(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

/** Why a target URL is refused as written (not http(s), credentials, an internal address given literally), or undefined. */
export function urlProblem(raw: string, allowedHosts: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials (the signature authenticates the service)';
  // A name is checked on what it resolves to, at each delivery; an address written here, now too.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && isInternal(host) && !hostAllowed(host, allowedHosts))
    return `names ${host}, an internal address: list it in WEBHOOK_ALLOWED_HOSTS to allow it`;
  return undefined;
}
