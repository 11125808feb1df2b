import type { Moment } from '../application/changes.js';
import { MAX_ID } from '../domain/shared/types.js';
import { invalidQuery } from './errors.js';

/** An ISO 8601 date-time with its offset (`Z` or `±hh:mm`): a time without one would be ambiguous. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A date-time with an offset, as UTC ISO 8601 (the form events' times are stored in). */
export function parseTime(name: string, raw: string): string {
  const time = DATE_TIME.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(time)) {
    throw invalidQuery(`${name} must be an ISO 8601 date-time with an offset, such as 2026-11-23T09:00:00Z`);
  }
  return new Date(time).toISOString();
}

export function parsePosition(name: string, raw: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(raw) || Number(raw) > MAX_ID) {
    throw invalidQuery(`${name} must be a position (an integer from 0) or an ISO 8601 date-time with an offset`);
  }
  return Number(raw);
}

/** A moment of the log, given as a position or as a date-time with an offset. */
export function parseMoment(name: string, raw: string): Moment {
  return /^[0-9]+$/.test(raw) ? { position: parsePosition(name, raw) } : { time: parseTime(name, raw) };
}
