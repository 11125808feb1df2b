import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Command, Fields } from '../../src/domain/commands.js';
import { decide } from '../../src/domain/decide.js';
import { resourceOf } from '../../src/domain/resources.js';
import type { Sealed } from '../../src/domain/shared/fields.js';
import { clientCreated, given, serverCreated, tagCreated } from '../support/given.js';

const it = suite('deciders: given events / when command / then events');

const tag = (name: string): Fields<'tags'> => ({ name, color: '#000000', background: '#000000' });
const serverFields = (id: number, fields: Partial<Fields<'servers'>> = {}) => {
  const { id: _id, ...data } = serverCreated(id).data;
  return { ...data, passwd: data.passwd as Sealed, ...fields } as Fields<'servers'>;
};

it('create allocates the next id above every id ever used', () => {
  given(tagCreated(1), tagCreated(4), { type: 'TagDeleted', data: { id: 4 } })
    .when({ kind: 'create', resource: 'tags', fields: tag('new') })
    .thenEmits([{ type: 'TagCreated', data: { id: 5, ...tag('new') } }]);
});

it("a creation's data is the id, then every declared field in declaration order, whatever order it came in", () => {
  const world = given();
  for (const resource of ['tags', 'servers'] as const) {
    const fields: Record<string, unknown> = resource === 'tags' ? tag('ordered') : serverFields(0);
    // Reversed, with a member that is no field of the resource.
    const reversed = Object.fromEntries([...Object.entries(fields).reverse(), ['not_a_field', 1]]);
    const [event] = decide({ kind: 'create', resource, fields: reversed } as Command, world.state);
    assert.equal(Object.keys(event.data), ['id', ...resourceOf(resource).fieldNames]);
    for (const field of resourceOf(resource).fieldNames) assert.is(event.data[field], fields[field], field);
  }
});

it('create with the id of a deleted entry is a conflict', () => {
  given(tagCreated(4), { type: 'TagDeleted', data: { id: 4 } })
    .when({ kind: 'create', resource: 'tags', id: 4, fields: tag('again') })
    .thenFails(409, 'conflict');
});

it('tag names are unique case-insensitively, but renaming a tag to its own name in other case is fine', () => {
  const world = given(tagCreated(1, 'Galera'), tagCreated(2, 'other'));
  world.when({ kind: 'create', resource: 'tags', fields: tag('GALERA') }).thenFails(409, 'conflict');
  world
    .when({ kind: 'patch', resource: 'tags', id: 1, fields: { name: 'galera' } })
    .thenEmits([{ type: 'TagUpdated', data: { id: 1, changes: { name: 'galera' } } }]);
  world.when({ kind: 'patch', resource: 'tags', id: 2, fields: { name: 'galera' } }).thenFails(409, 'conflict');
});

it('an unchanged PATCH decides no event', () => {
  given(tagCreated(1, 'same'))
    .when({ kind: 'patch', resource: 'tags', id: 1, fields: { name: 'same' } })
    .thenEmits([]);
});

it('the expected version is checked: a list of versions, or any', () => {
  const world = given(tagCreated(1), { type: 'TagUpdated', data: { id: 1, changes: { name: 'x' } } });
  world.when({ kind: 'delete', resource: 'tags', id: 1, expected: [1] }).thenFails(412, 'precondition_failed');
  world.when({ kind: 'delete', resource: 'tags', id: 1, expected: [] }).thenFails(412, 'precondition_failed');
  world
    .when({ kind: 'delete', resource: 'tags', id: 1, expected: [1, 2] })
    .thenEmits([{ type: 'TagDeleted', data: { id: 1 } }]);
  world
    .when({ kind: 'delete', resource: 'tags', id: 1, expected: 'any' })
    .thenEmits([{ type: 'TagDeleted', data: { id: 1 } }]);
});

it('deleting a tag is one event, whatever the number of servers carrying it', () => {
  given(tagCreated(1), tagCreated(2), serverCreated(1, { tags: [1, 2] }), serverCreated(2, { tags: [1] }))
    .when({ kind: 'delete', resource: 'tags', id: 1 })
    .thenEmits([{ type: 'TagDeleted', data: { id: 1 } }]);
});

it('client 99 is guarded; a client with live servers is in use; with only soft-deleted ones it is one event', () => {
  const world = given(clientCreated(100), serverCreated(1, { id_client: 100 }), serverCreated(2, { id_client: 100 }), {
    type: 'ServerDeleted',
    data: { id: 2 },
  });
  world.when({ kind: 'delete', resource: 'clients', id: 99 }).thenFails(409, 'delete_guarded');
  world
    .when({ kind: 'delete', resource: 'clients', id: 100 })
    .thenFails(409, 'in_use', (e) => assert.equal(e.extra.dependents, [{ resource: 'servers', id: 1 }]));
  given(clientCreated(100), serverCreated(2, { id_client: 100 }), { type: 'ServerDeleted', data: { id: 2 } })
    .when({ kind: 'delete', resource: 'clients', id: 100 })
    .thenEmits([{ type: 'ClientDeleted', data: { id: 100 } }]);
});

it('environments 1–6 are guarded; others in use by live servers only', () => {
  const world = given(
    { type: 'EnvironmentCreated', data: { id: 7, libelle: 'Lab', key: 'lab', class: 'info', letter: 'L' } },
    serverCreated(1, { id_environment: 7 }),
  );
  world.when({ kind: 'delete', resource: 'environments', id: 3 }).thenFails(409, 'delete_guarded');
  world.when({ kind: 'delete', resource: 'environments', id: 7 }).thenFails(409, 'in_use');
});

it('servers: soft delete once, restore only when what they reference exists', () => {
  const world = given(clientCreated(100), serverCreated(1, { id_client: 100 }), {
    type: 'ServerDeleted',
    data: { id: 1 },
  });
  world.when({ kind: 'delete', resource: 'servers', id: 1 }).thenEmits([]);
  world
    .when({ kind: 'patch', resource: 'servers', id: 1, fields: {}, restore: true })
    .thenEmits([{ type: 'ServerRestored', data: { id: 1 } }]);
  // A deleted client's soft-deleted servers move to client 99; a deleted environment stays named.
  given(
    { type: 'EnvironmentCreated', data: { id: 7, libelle: 'Lab', key: 'lab', class: 'info', letter: 'L' } },
    serverCreated(1, { id_environment: 7 }),
    { type: 'ServerDeleted', data: { id: 1 } },
    { type: 'EnvironmentDeleted', data: { id: 7 } },
  )
    .when({ kind: 'patch', resource: 'servers', id: 1, fields: {}, restore: true })
    .thenFails(422, 'validation_failed', (e) =>
      assert.is((e.extra.errors as { field: string }[])[0].field, 'is_deleted'),
    );
});

it('server uniqueness covers soft-deleted servers; name and ip compare case-insensitively', () => {
  const world = given(serverCreated(1, { name: 'DB', ip: 'DB.example.net' }), {
    type: 'ServerDeleted',
    data: { id: 1 },
  });
  world
    .when({ kind: 'create', resource: 'servers', fields: serverFields(2, { ip: 'db.EXAMPLE.net' }) })
    .thenFails(409, 'conflict');
  world
    .when({ kind: 'create', resource: 'servers', fields: serverFields(2, { name: 'db', ip: '10.9.9.9' }) })
    .thenFails(409, 'conflict');
});

it('references: unknown targets and unusable ones are 422 on their field', () => {
  given(serverCreated(1), { type: 'ServerDeleted', data: { id: 1 } })
    .when({ kind: 'create', resource: 'aliases', fields: { id_mysql_server: 1, dns: 'a.example.net', port: 3306 } })
    .thenFails(422, 'validation_failed', (e) =>
      assert.equal(e.extra.errors, [
        { field: 'id_mysql_server', code: 'unusable_reference', message: 'server 1 is deleted' },
      ]),
    );
  given()
    .when({ kind: 'create', resource: 'servers', fields: serverFields(1, { tags: [7] }) })
    .thenFails(422, 'validation_failed', (e) => assert.is((e.extra.errors as { field: string }[])[0].field, 'tags'));
});

it('an SSH key used by a storage area is in use', () => {
  given(
    {
      type: 'SshKeyCreated',
      data: {
        id: 1,
        name: 'k',
        user: 'root',
        public_key: 'ssh-ed25519 X',
        private_key: 'v1:x',
        type: 'ED25519',
        bit: 256,
        fingerprint: 'SHA256:x',
        comment: '',
      },
    },
    {
      type: 'StorageAreaCreated',
      data: {
        id: 3,
        id_ssh_key: 1,
        ip: '10.0.0.1',
        port: 22,
        path: '/b',
        libelle: 'b',
        id_geolocalisation_city: null,
        id_geolocalisation_country: null,
      },
    },
  )
    .when({ kind: 'delete', resource: 'ssh-keys', id: 1 })
    .thenFails(409, 'in_use', (e) => assert.equal(e.extra.dependents, [{ resource: 'storage-areas', id: 3 }]));
});

it('a hard-deleted entry answers deleted, an unknown one not_found', () => {
  const world = given(tagCreated(1), { type: 'TagDeleted', data: { id: 1 } });
  world.when({ kind: 'patch', resource: 'tags', id: 1, fields: { name: 'x' } }).thenFails(404, 'deleted');
  world.when({ kind: 'patch', resource: 'tags', id: 2, fields: { name: 'x' } }).thenFails(404, 'not_found');
});

it('revert: to the values of a version it had, as one event; a hard-deleted entry comes back', () => {
  const world = given(tagCreated(1, 'a'), { type: 'TagUpdated', data: { id: 1, changes: { name: 'b' } } });
  world
    .when({
      kind: 'revert',
      resource: 'tags',
      id: 1,
      toVersion: 1,
      values: { ...tag('a'), color: '#000000', background: '#FFFFFF' },
    })
    .thenEmits([
      {
        type: 'TagReverted',
        data: { id: 1, to_version: 1, values: { name: 'a', color: '#000000', background: '#FFFFFF' } },
      },
    ]);
  world.when({ kind: 'revert', resource: 'tags', id: 1, toVersion: 9 }).thenFails(422, 'validation_failed');
  const gone = given(tagCreated(1, 'a'), { type: 'TagDeleted', data: { id: 1 } }, tagCreated(2, 'A'));
  gone
    .when({
      kind: 'revert',
      resource: 'tags',
      id: 1,
      toVersion: 1,
      values: { name: 'a', color: '#000000', background: '#FFFFFF' },
    })
    .thenFails(409, 'conflict');
});

it.run();
