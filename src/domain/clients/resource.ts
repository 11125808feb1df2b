import { defineResource } from '../shared/declaration.js';
import { boolean, text } from '../shared/fields.js';

/** PmaControl's catch-all client: the soft-deleted servers of a deleted client move to it. */
export const FALLBACK_CLIENT_ID = 99;

/** A customer or team whose servers are monitored (PmaControl `client`). */
export const clients = defineResource({
  name: 'clients',
  title: 'Client',
  label: 'client',
  plural: 'Clients',
  category: 'client',
  description: 'Customers or teams that own servers (PmaControl `client`). Client 99 is the built-in fallback.',
  fields: {
    libelle: text(1, 100, { required: true, search: true, description: 'the name, unique (case-insensitive)' }),
    logo: text(0, 250, { default: '', search: true, description: 'file name or URL of a logo' }),
    is_monitored: boolean({ default: true, description: "whether PmaControl monitors this client's servers" }),
    is_display: boolean({ default: true, description: 'whether PmaControl shows this client in its lists' }),
  },
  unique: [
    { fields: ['libelle'], caseInsensitive: ['libelle'], describe: (client) => `client libelle "${client.libelle}"` },
  ],
  pmacontrol: { table: 'client', createdAt: 'date' },
  deletion: 'hard',
  guardDelete: (client) =>
    client.id === FALLBACK_CLIENT_ID
      ? 'it is the fallback client that receives the servers of deleted clients'
      : undefined,
  outputs: {
    date: {
      schema: { type: 'string', format: 'date-time' },
      description: 'when the client was created (PmaControl `date`)',
      from: (client) => client.created_at,
      example: '2026-01-15T09:30:00.000Z',
    },
  },
  example: { libelle: 'ACME', logo: 'acme.png', is_monitored: true },
});
