import { type ExpectedRevision, StoreUnavailable, WrongExpectedRevision } from '../port.js';

/**
 * Errors that say two appends raced: a duplicate (stream, revision), a deadlock, or a Galera
 * certification conflict (reported as a deadlock, also at COMMIT). Inside an append only: anywhere
 * else a deadlock is one more reason to try again later.
 */
const RACE = new Set([1062, 1213]);

/**
 * The server's errors that come from this code rather than from the database's state: a statement
 * it does not understand. Every other server error (1000–1999, 3000+: lock wait timeouts, a node
 * that lost quorum (1047, 1180), a server shutting down, a full disk, missing rights) and every
 * client error (2000–2999: lost connections) says the store cannot work now.
 */
const OWN_MISTAKES = new Set([1054, 1064, 1136]);

/** Network and driver codes of a store that cannot be reached or stopped answering. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);

interface DriverError {
  errno?: number;
  code?: string;
  message?: string;
  fatal?: boolean;
}

/** The statement timed out, or the connection broke: it must not go back to the pool. */
export const isBroken = (error: unknown): boolean => {
  const { code, fatal } = error as DriverError;
  return fatal === true || (code !== undefined && UNREACHABLE.has(code));
};

/** Whether the error says the store cannot work now (as opposed to a mistake in this code). */
export function isTransient(error: unknown): boolean {
  const { errno, code, message } = error as DriverError;
  if (code !== undefined && UNREACHABLE.has(code)) return true;
  if (typeof errno === 'number' && errno >= 1000 && !OWN_MISTAKES.has(errno)) return true;
  return /closed state|Pool is closed|connect ETIMEDOUT/.test(message ?? '');
}

/** Whether an error inside an append means another writer got there first. */
export const isRace = (error: unknown): boolean => RACE.has((error as DriverError).errno ?? 0);

/**
 * The database's error as the port's. `race`: the append the error interrupted before its commit (a
 * race is then WrongExpectedRevision, and the command is decided again).
 */
export function translate(error: unknown, race?: { stream: string; expected: ExpectedRevision }): Error {
  if (error instanceof StoreUnavailable || error instanceof WrongExpectedRevision) return error;
  if (race && isRace(error)) return new WrongExpectedRevision(race.stream, race.expected, 'moved');
  if (isTransient(error)) {
    const { errno, code, message } = error as DriverError;
    return new StoreUnavailable(`MariaDB event store: ${code ?? errno} ${message ?? ''}`.trim(), { cause: error });
  }
  return error as Error;
}
