import { Ajv2020 } from 'ajv/dist/2020.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCE_NAMES, resourceOf } from '../../src/domain/resources.js';
import { TOKEN_REQUEST } from '../../src/schemas/tokens.js';
import { WriteValidator } from '../../src/schemas/validator.js';
import { WRITE_MODES, writeSchema } from '../../src/schemas/write.js';

/**
 * The service compiles its write validators in the background once it listens, one per turn of the
 * event loop, so that no client's first write waits for one (the very first compile used to compile
 * JSON Schema's meta-schema too: 40–90 ms of a blocked event loop).
 */
const it = suite('write validators warmed in the background');

const turn = () => new Promise((resolve) => setImmediate(resolve));
const tag = (name: string) => ({ name, color: '#000000', background: '#FFFFFF' });

/** Waits for warming to end: its timers do not hold a process open (the service's server does). */
async function finished(done: Promise<void>): Promise<void> {
  const alive = setInterval(() => {}, 1000);
  try {
    await done;
  } finally {
    clearInterval(alive);
  }
}

it('warm compiles every validator, one per turn of the event loop, and they validate as before', async () => {
  const validator = new WriteValidator();
  const all = RESOURCE_NAMES.length * WRITE_MODES.length;
  const { done } = validator.warm();
  assert.is(validator.compiledCount, 0, 'nothing compiled before the event loop turns');
  await turn();
  assert.ok(validator.compiledCount < all, `one at a time, not all at once (${validator.compiledCount})`);
  await finished(done);
  assert.is(validator.compiledCount, all);
  // Warmed validators are the ones parse uses: a valid body passes, an unknown field does not.
  assert.equal(validator.parse('tags', 'create', tag('prod')).input.name, 'prod');
  try {
    validator.parse('tags', 'patch', { nope: 1 }, 1);
    assert.unreachable('an unknown field is refused');
  } catch (error) {
    assert.is((error as { errors?: { code: string }[] }).errors?.[0].code, 'unknown_field');
  }
});

it('stop ends the warming: what is compiled stays, the rest compiles on first use', async () => {
  const validator = new WriteValidator();
  const { done, stop } = validator.warm();
  await turn();
  stop();
  await finished(done);
  const compiled = validator.compiledCount;
  await turn();
  await turn();
  assert.is(validator.compiledCount, compiled, 'nothing more after stop');
  assert.ok(compiled < RESOURCE_NAMES.length * WRITE_MODES.length);
  validator.parse('tags', 'create', tag('x'));
  assert.ok(validator.compiledCount >= compiled, 'a write still gets its validator');
});

it('every schema the service compiles is valid JSON Schema (the service does not check them itself)', () => {
  const meta = new Ajv2020({ strict: false });
  assert.is(meta.validateSchema({ type: 'strin' }), false, 'a schema with a wrong type is refused');
  const schemas = RESOURCE_NAMES.flatMap((name) =>
    WRITE_MODES.map((mode) => [`${name} ${mode}`, writeSchema(resourceOf(name), mode)] as const),
  );
  for (const [what, schema] of [...schemas, ['token request', TOKEN_REQUEST] as const]) {
    assert.ok(meta.validateSchema(schema), `${what}: ${meta.errorsText(meta.errors)}`);
  }
});

it.run();
