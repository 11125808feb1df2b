import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { clientCreated, given, serverCreated, tagCreated } from '../support/given.js';

const it = suite('deciders: given events / when command / then events');

it('create allocates the next id above every id ever used', () => {
  given(tagCreated(1), tagCreated(4), { type: 'TagDeleted', data: { id: 4 } })
    .when('tags', { type: 'create', fields: { name: 'new', color: '#000000', background: '#000000' } })
    .then([{ type: 'TagCreated', data: { id: 5, name: 'new', color: '#000000', background: '#000000' } }]);
});

it('create with the id of a deleted entry is a conflict', () => {
  given(tagCreated(4), { type: 'TagDeleted', data: { id: 4 } })
    .when('tags', { type: 'create', id: 4, fields: { name: 'again', color: '#000000', background: '#000000' } })
    .thenFails(409, 'conflict');
});

it('tag names are unique case-insensitively, but renaming a tag to its own name in other case is fine', () => {
  const world = given(tagCreated(1, 'Galera'), tagCreated(2, 'other'));
  world
    .when('tags', { type: 'create', fields: { name: 'GALERA', color: '#000000', background: '#000000' } })
    .thenFails(409, 'conflict');
  world
    .when('tags', { type: 'patch', id: 1, fields: { name: 'galera' } })
    .then([{ type: 'TagUpdated', data: { id: 1, changes: { name: 'galera' } } }]);
  world.when('tags', { type: 'patch', id: 2, fields: { name: 'galera' } }).thenFails(409, 'conflict');
});

it('an unchanged PATCH decides no event', () => {
  given(tagCreated(1, 'same'))
    .when('tags', { type: 'patch', id: 1, fields: { name: 'same' } })
    .then([]);
});

it('If-Match is checked against the version', () => {
  const world = given(tagCreated(1), { type: 'TagUpdated', data: { id: 1, changes: { name: 'x' } } });
  world.when('tags', { type: 'delete', id: 1, ifMatch: '"1"' }).thenFails(412, 'precondition_failed');
  world.when('tags', { type: 'delete', id: 1, ifMatch: '"2"' }).then([{ type: 'TagDeleted', data: { id: 1 } }]);
});

it('deleting a tag also updates every server carrying it', () => {
  given(tagCreated(1), tagCreated(2), serverCreated(1, { tags: [1, 2] }), serverCreated(2, { tags: [2] }))
    .when('tags', { type: 'delete', id: 1 })
    .then([
      { type: 'TagDeleted', data: { id: 1 } },
      { type: 'ServerUpdated', data: { id: 1, changes: { tags: [2] } } },
    ]);
});

it('client 99 is guarded; a client with live servers is in use; soft-deleted servers move to 99', () => {
  const world = given(clientCreated(100), serverCreated(1, { id_client: 100 }), serverCreated(2, { id_client: 100 }), {
    type: 'ServerDeleted',
    data: { id: 2 },
  });
  world.when('clients', { type: 'delete', id: 99 }).thenFails(409, 'delete_guarded');
  world
    .when('clients', { type: 'delete', id: 100 })
    .thenFails(409, 'in_use', (e) => assert.equal(e.extra.dependents, [{ resource: 'servers', id: 1 }]));
  given(clientCreated(100), serverCreated(2, { id_client: 100 }), { type: 'ServerDeleted', data: { id: 2 } })
    .when('clients', { type: 'delete', id: 100 })
    .then([
      { type: 'ClientDeleted', data: { id: 100 } },
      { type: 'ServerUpdated', data: { id: 2, changes: { id_client: 99 } } },
    ]);
});

it('environments 1–6 are guarded; others in use by live servers only', () => {
  const world = given(
    { type: 'EnvironmentCreated', data: { id: 7, libelle: 'Lab', key: 'lab', class: 'info', letter: 'L' } },
    serverCreated(1, { id_environment: 7 }),
  );
  world.when('environments', { type: 'delete', id: 3 }).thenFails(409, 'delete_guarded');
  world.when('environments', { type: 'delete', id: 7 }).thenFails(409, 'in_use');
});

it('servers: soft delete once, restore only when the client and environment exist', () => {
  const world = given(clientCreated(100), serverCreated(1, { id_client: 100 }), {
    type: 'ServerDeleted',
    data: { id: 1 },
  });
  world.when('servers', { type: 'delete', id: 1 }).then([]);
  world
    .when('servers', { type: 'patch', id: 1, fields: {}, restore: true })
    .then([{ type: 'ServerRestored', data: { id: 1 } }]);
  given(
    clientCreated(100),
    serverCreated(1, { id_client: 100 }),
    { type: 'ServerDeleted', data: { id: 1 } },
    { type: 'ClientDeleted', data: { id: 100 } },
  )
    .when('servers', { type: 'patch', id: 1, fields: {}, restore: true })
    .thenFails(422, 'validation_failed');
});

it('server uniqueness covers soft-deleted servers; ip compares case-insensitively', () => {
  const world = given(serverCreated(1, { name: 'db', ip: 'DB.example.net' }), {
    type: 'ServerDeleted',
    data: { id: 1 },
  });
  const { id: _id, ...fields } = serverCreated(2, { ip: 'db.EXAMPLE.net' }).data;
  world.when('servers', { type: 'create', fields }).thenFails(409, 'conflict');
  world
    .when('servers', { type: 'create', fields: { ...fields, name: 'db', ip: '10.9.9.9' } })
    .thenFails(409, 'conflict');
});

it('aliases cannot point at a soft-deleted server', () => {
  given(serverCreated(1), { type: 'ServerDeleted', data: { id: 1 } })
    .when('aliases', { type: 'create', fields: { id_mysql_server: 1, dns: 'a.example.net', port: 3306 } })
    .thenFails(422, 'validation_failed', (e) =>
      assert.is((e.extra.errors as { field: string }[])[0].field, 'id_mysql_server'),
    );
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
    .when('ssh-keys', { type: 'delete', id: 1 })
    .thenFails(409, 'in_use', (e) => assert.equal(e.extra.dependents, [{ resource: 'storage-areas', id: 3 }]));
});

it('a hard-deleted entry answers deleted, an unknown one not_found', () => {
  const world = given(tagCreated(1), { type: 'TagDeleted', data: { id: 1 } });
  world.when('tags', { type: 'patch', id: 1, fields: { name: 'x' } }).thenFails(404, 'deleted');
  world.when('tags', { type: 'patch', id: 2, fields: { name: 'x' } }).thenFails(404, 'not_found');
});

it.run();
