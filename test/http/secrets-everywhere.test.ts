import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCE_NAMES, resourceOf } from '../../src/domain/resources.js';
import { adminRequests, entriesOf, prerequisites, validBody } from '../support/bodies.js';
import { startHarness } from '../support/harness.js';

const it = suite('secrets: whatever resource declares one, it never reaches the log or an answer in plain form');

/** The telling parts of a secret: the whole of a one-line value, each long line of a key. */
const tellingParts = (value: string) =>
  value.includes('\n') ? value.split('\n').filter((line) => line.length >= 20 && !line.startsWith('-----')) : [value];

for (const name of RESOURCE_NAMES.filter((r) => resourceOf(r).secretFields.length > 0)) {
  it(`${name}: ${resourceOf(name).secretFields.join(', ')}`, async () => {
    const h = await startHarness();
    const request = await adminRequests(h);
    try {
      const body = validBody(name, 7, await prerequisites(h));
      const made = await request('POST', `${entriesOf(name)}`, { body });
      assert.is(made.status, 201, made.text);
      const secrets = resourceOf(name).secretFields.map((field) => body[field] as string);
      const changed = Object.fromEntries(resourceOf(name).secretFields.map((field) => [field, body[field]]));
      const put = await request('PATCH', `${entriesOf(name)}/${made.body.id}`, { body: changed });
      assert.is(put.status, 200);
      const everything = [
        made.text,
        put.text,
        (await request('GET', `${entriesOf(name)}`)).text,
        (await request('GET', `${entriesOf(name)}/${made.body.id}`)).text,
        (await request('GET', `${entriesOf(name)}/${made.body.id}/history`)).text,
        JSON.stringify(await h.store.readAll()),
        JSON.stringify([...h.readModels.lines()]),
        h.logs.join('\n'),
      ].join('\n');
      for (const secret of secrets) {
        for (const part of tellingParts(secret))
          assert.not.ok(everything.includes(part), `${name}: "${part.slice(0, 12)}…" leaked`);
      }
      for (const field of resourceOf(name).secretFields) {
        assert.is(made.body.item[`has_${field}`], true);
        assert.not.ok(field in made.body.item);
      }
    } finally {
      await h.close();
    }
  });
}

it.run();
