import * as assert from 'uvu/assert';
import { BASE, type Reply, send } from '../support/harness.js';

/** Requests of the change sets' tests, as the anonymous writer of a loopback service. */
export const call = (url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  send(url, method, path, { headers, ...(body === undefined ? {} : { body }) });

let made = 0;

/** `count` servers in environment 1, and another environment; their ids (names and addresses never used before). */
export async function inventory(url: string, count: number): Promise<{ servers: number[]; environment: number }> {
  const round = ++made;
  const environment = await call(url, 'POST', `${BASE}/environments`, {
    libelle: `prod-${round}`,
    key: `prod${round}`,
    class: 'info',
    letter: 'Q',
  });
  assert.is(environment.status, 201, environment.text);
  const servers: number[] = [];
  for (let i = 0; i < count; i++) {
    const made = await call(url, 'POST', `${BASE}/servers`, {
      id_client: 99,
      id_environment: 1,
      name: `cs-${round}-${i}`,
      ip: `10.${20 + round}.${i >> 8}.${i & 255}`,
      login: 'dba',
      passwd: `pw-${i}`,
    });
    assert.is(made.status, 201, made.text);
    servers.push(made.body.id);
  }
  return { servers, environment: environment.body.id };
}

export async function openSet(url: string, name: string): Promise<number> {
  const opened = await call(url, 'POST', '/fr/api/change-sets', { name });
  assert.is(opened.status, 201, opened.text);
  return opened.body.change_set.id;
}

/** The operations that move servers to an environment. */
export const moves = (servers: number[], environment: number) =>
  servers.map((id) => ({ method: 'PATCH', path: `${BASE}/servers/${id}`, body: { id_environment: environment } }));

export async function stageMany(url: string, id: number, operations: unknown[]): Promise<Reply> {
  return call(url, 'POST', `/fr/api/change-sets/${id}/operations`, { operations });
}

/** How many servers are in the environment, as a reader sees it now. */
export async function countIn(url: string, environment: number): Promise<number> {
  const list = await call(url, 'GET', `${BASE}/servers?id_environment=${environment}&limit=1000`);
  return list.body.items.length;
}
