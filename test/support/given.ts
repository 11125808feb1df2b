import * as assert from 'uvu/assert';
import type { Command } from '../../src/domain/commands.js';
import { decide } from '../../src/domain/decide.js';
import { type Effect, evolve } from '../../src/domain/evolve.js';
import { genesisEvents } from '../../src/domain/genesis.js';
import { DomainError } from '../../src/domain/shared/errors.js';
import { type DomainEvent, EVENT_SCHEMA, type LoggedEvent } from '../../src/domain/shared/types.js';
import { type ConfigState, emptyState } from '../../src/domain/state.js';

/** The events as the log would hold them: revisions in order, one second apart, by `test`. */
export function logged(events: DomainEvent[], from = 0): LoggedEvent[] {
  return events.map((event, i) => ({
    ...event,
    revision: from + i,
    metadata: {
      actor: 'test',
      request_id: `r${from + i}`,
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, from + i)).toISOString(),
      schema: EVENT_SCHEMA,
    },
  }));
}

/** A state folded from the genesis and `events`. */
export function fold(...events: DomainEvent[]): { state: ConfigState; effects: Effect[][] } {
  const state = emptyState();
  const effects = logged([...genesisEvents('0'.repeat(32)), ...events]).map((event) => evolve(state, event));
  return { state, effects: effects.slice(genesisEvents('0'.repeat(32)).length) };
}

/** given events (after genesis) / when a command / then events or an error. */
export function given(...events: DomainEvent[]) {
  const { state } = fold(...events);
  return {
    state,
    when(command: Command) {
      const run = () => decide(command, state);
      return {
        thenEmits(expected: DomainEvent[]) {
          assert.equal(run(), expected);
        },
        thenFails(status: number, code: string, check: (error: DomainError) => void = () => {}) {
          try {
            run();
          } catch (error) {
            assert.instance(error, DomainError);
            assert.equal([(error as DomainError).status, (error as DomainError).code], [status, code]);
            check(error as DomainError);
            return;
          }
          assert.unreachable(`expected ${status} ${code}`);
        },
      };
    },
  };
}

export const tagCreated = (id: number, name = `tag${id}`) => ({
  type: 'TagCreated',
  data: { id, name, color: '#000000', background: '#FFFFFF' },
});
export const clientCreated = (id: number, libelle = `client${id}`) => ({
  type: 'ClientCreated',
  data: { id, libelle, logo: '', is_monitored: true },
});

export function serverCreated(id: number, fields: Record<string, unknown> = {}) {
  return {
    type: 'ServerCreated',
    data: {
      id,
      id_client: 99,
      id_environment: 1,
      name: `srv${id}`,
      display_name: `srv${id}`,
      ip: `10.0.0.${id}`,
      port: 3306,
      hostname: '',
      login: 'pma',
      passwd: 'v1:sealed',
      database: 'mysql',
      is_ssl: false,
      ssh_nat: '',
      ssh_port: 22,
      ssh_login: '',
      is_sudo: false,
      is_root: true,
      is_monitored: true,
      is_proxy: false,
      is_vip: false,
      is_acknowledged: 0,
      tags: [],
      ...fields,
    },
  };
}
