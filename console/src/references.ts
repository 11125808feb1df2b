/**
 * What the console knows of the resources' shapes: the fields that name an entry, and the fields that
 * hold ids of other entries. The API's declarations are the truth: test/console/references.test.ts
 * checks these against them.
 */

/** The fields that name each resource's entries: the first that holds a value. */
export const LABELS: Record<string, readonly string[]> = {
  servers: ['display_name', 'name'],
  clients: ['libelle'],
  environments: ['libelle'],
  tags: ['name'],
  aliases: ['dns'],
  'ssh-keys': ['name'],
  'storage-areas': ['libelle'],
  'event-rules': ['name'],
  policies: ['name'],
};

/** The fields of each resource that hold ids of other entries, and whose. */
export const REFERENCES: Record<string, Readonly<Record<string, string>>> = {
  servers: { id_client: 'clients', id_environment: 'environments', tags: 'tags', ssh_keys: 'ssh-keys' },
  aliases: { id_mysql_server: 'servers' },
  'storage-areas': { id_ssh_key: 'ssh-keys' },
};
