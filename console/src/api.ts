/**
 * The console talks to the service through its public API only, as any client would: the token the
 * person signs in with is kept for this tab (sessionStorage), sent as a bearer token, and never put
 * in a URL or a cookie.
 */

const TOKEN = 'pmacontrol-console-token';

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN),
  set: (value: string) => sessionStorage.setItem(TOKEN, value),
  clear: () => sessionStorage.removeItem(TOKEN),
};

/** A refusal of the API, with its problem+json. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** Called on a 401: the token is gone or was never enough; the shell asks for one. */
let onUnauthorized: (detail: string) => void = () => {};
export const whenUnauthorized = (handler: (detail: string) => void) => {
  onUnauthorized = handler;
};

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  const value = token.get();
  return { ...(value ? { Authorization: `Bearer ${value}` } : {}), ...extra };
}

/** A request to the API; a problem becomes an ApiError (a 401 also tells the shell). */
export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(path, { ...init, headers: headers(init.headers as Record<string, string>) });
  if (response.ok) return response;
  let problem = { code: 'error', detail: `${response.status} ${response.statusText}` };
  try {
    problem = await response.json();
  } catch {
    // not problem+json
  }
  if (response.status === 401) onUnauthorized(problem.detail);
  throw new ApiError(response.status, problem.code, problem.detail);
}

export const getJson = async <T>(path: string): Promise<T> => (await request(path)).json() as Promise<T>;

export interface Whoami {
  actor: string;
  role: 'none' | 'reader' | 'writer' | 'admin';
  secrets: boolean;
}

export interface DiffMember {
  field: string;
  before: unknown;
  after: unknown;
}

export interface Change {
  position: number;
  revision: number | null;
  type: string;
  at: string;
  actor: string;
  request_id: string;
  resource: string | null;
  id: number | null;
  data: Record<string, unknown>;
  diff: DiffMember[];
  effects: { resource: string; id: number; revision: number; diff: DiffMember[] }[];
}

export interface HistoryItem {
  position: number;
  revision: number;
  type: string;
  at: string;
  actor: string;
  request_id: string;
  data: Record<string, unknown>;
  diff: DiffMember[];
}

export type Entry = Record<string, unknown> & { id: number; version: number };

/** The resources of the configuration, in the order people think of them. */
export const RESOURCES = ['servers', 'clients', 'environments', 'tags', 'aliases', 'ssh-keys', 'storage-areas'];

/** The resources only admins see, served at `/fr/api/<name>`; the others are at `/fr/api/config/<name>`. */
export const ADMIN_RESOURCES = ['event-rules', 'policies'];

/** Where the API serves a resource's entries. */
export const entriesPath = (resource: string) =>
  ADMIN_RESOURCES.includes(resource) ? `/fr/api/${resource}` : `/fr/api/config/${resource}`;

/** What a person may do, by role. */
export const mayWrite = (who: Whoami | null) => who?.role === 'writer' || who?.role === 'admin';

/** A query string of the values that are set. */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
