import { evolveEntry } from '../shared/evolve.js';
import type { Created, Deleted, Entry, Updated } from '../shared/types.js';

export const ENVIRONMENT_CLASSES = ['danger', 'warning', 'default', 'info', 'success', 'primary'] as const;
export type EnvironmentClass = (typeof ENVIRONMENT_CLASSES)[number];

export interface EnvironmentFields {
  libelle: string;
  key: string;
  class: EnvironmentClass;
  letter: string;
}
export type Environment = Entry<EnvironmentFields>;

export type EnvironmentEvent =
  | Created<'Environment', EnvironmentFields>
  | Updated<'Environment', EnvironmentFields>
  | Deleted<'Environment'>;

export const evolve = (entry: Environment | undefined, event: EnvironmentEvent, at: string) =>
  evolveEntry(entry, event, at);
