import { FALLBACK_CLIENT_ID } from './clients/resource.js';
import type { DomainEvent } from './shared/types.js';

const ENVIRONMENTS = [
  ['Production', 'prod', 'danger', 'P'],
  ['Preprod', 'preprod', 'warning', 'U'],
  ['Recipe', 'recette', 'default', 'R'],
  ['Integration', 'integration', 'info', 'I'],
  ['Developpement', 'dev', 'success', 'D'],
  ['Test', 'test', 'primary', 'T'],
] as const;

/**
 * What an empty store starts with: PmaControl's environments 1–6, its fallback client 99, and the
 * fingerprint of the key its secrets will be sealed under.
 */
export function genesisEvents(keyFingerprint: string): DomainEvent[] {
  return [
    ...ENVIRONMENTS.map(([libelle, key, cls, letter], i) => ({
      type: 'EnvironmentCreated',
      data: { id: i + 1, libelle, key, class: cls, letter },
    })),
    {
      type: 'ClientCreated',
      data: { id: FALLBACK_CLIENT_ID, libelle: 'Unassigned', logo: '', is_monitored: false, is_display: true },
    },
    { type: 'SecretKeyRecorded', data: { fingerprint: keyFingerprint } },
  ];
}
