import { defineResource } from '../shared/declaration.js';
import { host, nullableInteger, port, ref, text } from '../shared/fields.js';

/** A place backups are written to over SSH (PmaControl `backup_storage_area`). */
export const storageAreas = defineResource({
  name: 'storage-areas',
  title: 'StorageArea',
  label: 'storage area',
  plural: 'StorageAreas',
  category: 'storageArea',
  description: 'Places backups are written to, reached over SSH (PmaControl `backup_storage_area`).',
  fields: {
    id_ssh_key: ref('ssh-keys', {
      required: true,
      aliases: ['ssh_key'],
      whenTargetDeleted: 'refuse',
      description: 'the SSH key used to reach the area',
    }),
    ip: host(255, { required: true, search: true, description: 'address or host name of the storage host' }),
    port: port({ default: 22, description: 'its SSH port' }),
    path: text(1, 4096, { required: true, pattern: '^/', search: true, description: 'an absolute path on that host' }),
    libelle: text(1, 64, { required: true, search: true, description: 'a name for people' }),
    id_geolocalisation_city: nullableInteger(1, {
      default: null,
      pmacontrol: { zeroIsNull: true },
      description: 'id of a city, or null',
    }),
    id_geolocalisation_country: nullableInteger(1, {
      default: null,
      pmacontrol: { zeroIsNull: true },
      description: 'id of a country, or null',
    }),
  },
  pmacontrol: { table: 'backup_storage_area' },
  deletion: 'hard',
  objectAliases: {
    géolocalisation: {
      description: 'both geolocalisation ids at once: `{"city": n, "country": n}`',
      parts: { city: 'id_geolocalisation_city', country: 'id_geolocalisation_country' },
    },
  },
  example: {
    id_ssh_key: 1,
    ip: '10.0.0.12',
    port: 22,
    path: '/srv/backup',
    libelle: 'NAS Paris',
    id_geolocalisation_city: null,
    id_geolocalisation_country: null,
  },
});
