import { defineResource } from '../shared/declaration.js';
import { host, port, ref } from '../shared/fields.js';

/** Another DNS name and port under which a monitored server answers (PmaControl `alias_dns`). */
export const aliases = defineResource({
  name: 'aliases',
  title: 'Alias',
  label: 'DNS alias',
  plural: 'Aliases',
  category: 'alias',
  description: 'Other DNS names and ports under which a server answers (PmaControl `alias_dns`).',
  fields: {
    id_mysql_server: ref('servers', {
      required: true,
      unusable: { when: (server) => server.is_deleted === true, why: 'is deleted' },
      whenTargetDeleted: 'refuse',
      description: 'the server this name points at; it must not be soft-deleted',
    }),
    dns: host(200, { required: true, search: true, description: 'a host name or IP address' }),
    port: port({ required: true, description: 'the port, 1–65535' }),
  },
  unique: [
    {
      fields: ['dns', 'port'],
      caseInsensitive: ['dns'],
      describe: (alias) => `alias ${alias.dns}:${alias.port}`,
    },
  ],
  pmacontrol: { table: 'alias_dns' },
  deletion: 'hard',
  example: { id_mysql_server: 1, dns: 'db-primary.example.net', port: 3306 },
});
