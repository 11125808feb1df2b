import { defineResource } from '../shared/declaration.js';
import { oneOf, text } from '../shared/fields.js';

/** Environments 1–6 are PmaControl's own (Production … Test) and cannot be deleted. */
export const LAST_BUILT_IN_ENVIRONMENT = 6;

export const ENVIRONMENT_CLASSES = ['danger', 'warning', 'default', 'info', 'success', 'primary'] as const;

/** A stage servers run in: Production, Preprod … (PmaControl `environment`). */
export const environments = defineResource({
  name: 'environments',
  title: 'Environment',
  label: 'environment',
  plural: 'Environments',
  category: 'environment',
  description: 'Stages servers belong to (PmaControl `environment`). Environments 1–6 are built in.',
  fields: {
    libelle: text(1, 20, { required: true, search: true, description: 'the name, unique (case-insensitive)' }),
    key: text(1, 13, {
      required: true,
      pattern: '^\\S+$',
      search: true,
      description: 'a short key without white space',
    }),
    class: oneOf(ENVIRONMENT_CLASSES, { required: true, description: 'the colour class shown in PmaControl' }),
    letter: text(1, 1, { required: true, description: 'one letter shown in badges' }),
  },
  unique: [
    { fields: ['libelle'], caseInsensitive: ['libelle'], describe: (env) => `environment libelle "${env.libelle}"` },
  ],
  pmacontrol: { table: 'environment' },
  deletion: 'hard',
  guardDelete: (env) =>
    (env.id as number) <= LAST_BUILT_IN_ENVIRONMENT ? 'environments 1 to 6 are built in' : undefined,
  example: { libelle: 'Staging', key: 'staging', class: 'info', letter: 'S' },
});
