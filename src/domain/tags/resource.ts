import { defineResource } from '../shared/declaration.js';
import { color, text } from '../shared/fields.js';

/** A label servers carry (PmaControl's `tag`), drawn with its colours in the interface. */
export const tags = defineResource({
  name: 'tags',
  title: 'Tag',
  label: 'tag',
  plural: 'Tags',
  category: 'tag',
  description: 'Labels that servers carry, drawn with their colours (PmaControl `tag`).',
  fields: {
    name: text(1, 50, { required: true, search: true, description: 'the label, unique (case-insensitive)' }),
    color: color({ required: true, description: 'text colour, `#RRGGBB`' }),
    background: color({ required: true, description: 'background colour, `#RRGGBB`' }),
  },
  unique: [{ fields: ['name'], caseInsensitive: ['name'], describe: (tag) => `tag name "${tag.name}"` }],
  pmacontrol: { table: 'tag' },
  deletion: 'hard',
  example: { name: 'galera', color: '#FFFFFF', background: '#337AB7' },
});
