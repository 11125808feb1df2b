import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LABELS, REFERENCES } from '../../console/src/references.js';
import { RESOURCE_NAMES, RESOURCES } from '../../src/domain/resources.js';

/**
 * The console names entries where ids stand for them from what it knows of the resources: that must
 * be what the declarations say, or a new reference would show as a bare id (and a renamed label field
 * as nothing).
 */
test("the console's references are the declarations' references, field by field", () => {
  for (const name of RESOURCE_NAMES) {
    const declared = Object.fromEntries(RESOURCES[name].references.map((link) => [link.field, link.reference.target]));
    assert.equal(REFERENCES[name] ?? {}, declared, name);
  }
  assert.equal(
    Object.keys(REFERENCES).filter((name) => !RESOURCE_NAMES.includes(name as never)),
    [],
  );
});

test("the console's label fields are fields of each resource, and every resource has one", () => {
  assert.equal(Object.keys(LABELS).sort(), [...RESOURCE_NAMES].sort());
  for (const name of RESOURCE_NAMES) {
    for (const field of LABELS[name]!) assert.ok(field in RESOURCES[name].declaration.fields, `${name}.${field}`);
  }
});

test.run();
