import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { leafHash, verifyConsistency, verifyInclusion } from '../../src/engine/merkle.js';
import { generateSigner, openNote, parseCheckpoint, parseVerifier } from '../../src/engine/signed-note.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * The log anyone can verify, through the API: a checkpoint signed with the key the public-key route
 * gives, leaves whose hashes the proofs start from, inclusion proofs that verify against the
 * checkpoint's root, consistency proofs between two checkpoints, and no ciphertext in any leaf.
 */

const it = suite<{ h: Harness }>('the verifiable log: checkpoint, public key, leaves, proofs');
const CONFIG = '/fr/api/config';
const LOG = '/fr/api/log';

it.before.each(async (context) => {
  context.h = await startHarness({ logKey: generateSigner('pmacontrol-config/0123456789abcdef') });
});
it.after.each(async ({ h }) => h.close());

async function checkpointOf(h: Harness) {
  const key = parseVerifier((await h.request('GET', `${LOG}/public-key`)).text);
  const note = await h.request('GET', `${LOG}/checkpoint`);
  assert.is(note.status, 200);
  assert.match(note.headers.get('content-type') ?? '', /^text\/plain/);
  return { key, note: note.text, ...parseCheckpoint(openNote(note.text, key)) };
}

it('the checkpoint is signed by the public key, and names every event', async ({ h }) => {
  await h.request('POST', `${CONFIG}/tags`, { body: { name: 'galera', color: '#112233', background: '#FFFFFF' } });
  const { key, origin, size, root } = await checkpointOf(h);
  assert.is(key.name, 'pmacontrol-config/0123456789abcdef');
  assert.is(origin, key.name);
  assert.is(size, h.service.revision + 1);
  assert.ok((await h.log!.root(size)).equals(root), 'the stored tree gives the root the checkpoint signs');
  const changes = await h.request('GET', '/fr/api/changes?type=LogKeyRecorded');
  assert.is(changes.body.items.length, 1, 'the public key is recorded in the log');
  assert.is(changes.body.items[0].data.verifier_key, (await h.request('GET', `${LOG}/public-key`)).text.trim());
});

it('every leaf is in the checkpoint: its hash, its audit path, the root', async ({ h }) => {
  for (let i = 0; i < 5; i++)
    await h.request('POST', `${CONFIG}/tags`, { body: { name: `t${i}`, color: '#112233', background: '#FFFFFF' } });
  const { size, root } = await checkpointOf(h);
  for (let position = 1; position <= size; position++) {
    const leaf = await h.request('GET', `${LOG}/leaves/${position}`);
    assert.is(leaf.status, 200);
    assert.is(leaf.body.position, position);
    const proof = await h.request('GET', `${LOG}/proof/inclusion?position=${position}&size=${size}`);
    assert.is(proof.body.leaf_hash, leafHash(Buffer.from(leaf.text)).toString('hex'), `leaf ${position}`);
    const hashes = proof.body.hashes.map((hash: string) => Buffer.from(hash, 'hex'));
    assert.ok(verifyInclusion(leafHash(Buffer.from(leaf.text)), position - 1, size, hashes, root), `proof ${position}`);
    assert.not.ok(verifyInclusion(leafHash(Buffer.from(`${leaf.text} `)), position - 1, size, hashes, root));
  }
});

it('a later checkpoint is consistent with an earlier one', async ({ h }) => {
  const first = await checkpointOf(h);
  for (let i = 0; i < 7; i++)
    await h.request('POST', `${CONFIG}/tags`, { body: { name: `c${i}`, color: '#112233', background: '#FFFFFF' } });
  const second = await checkpointOf(h);
  assert.ok(second.size > first.size);
  const proof = await h.request('GET', `${LOG}/proof/consistency?from=${first.size}&to=${second.size}`);
  assert.equal([proof.body.from, proof.body.to], [first.size, second.size]);
  const hashes = proof.body.hashes.map((hash: string) => Buffer.from(hash, 'hex'));
  assert.ok(verifyConsistency(first.size, second.size, hashes, first.root, second.root));
  assert.not.ok(verifyConsistency(first.size, second.size, hashes, second.root, second.root));
});

it('a leaf holds the digest of a sealed secret, never the ciphertext, and changes with it', async ({ h }) => {
  const server = await h.request('POST', `${CONFIG}/servers`, {
    body: { id_client: 99, id_environment: 1, name: 'db-1', ip: '10.0.0.1', login: 'pma', passwd: 's3cret' },
  });
  const position = h.service.revision + 1;
  const sealed = h.service.state.collections.servers.get(server.body.id)!.passwd as string;
  const leaf = (await h.request('GET', `${LOG}/leaves/${position}`)).text;
  assert.not.ok(leaf.includes(sealed), 'no ciphertext');
  assert.not.ok(leaf.includes('s3cret'));
  assert.ok(leaf.includes(createHash('sha256').update(sealed).digest('hex')), 'the digest of the sealed value');
  assert.is(JSON.parse(leaf).type, 'ServerCreated');
  assert.is(leaf, JSON.stringify(JSON.parse(leaf)), 'no space');
});

it('positions and sizes outside the log are refused, as problems', async ({ h }) => {
  const size = h.service.revision + 1;
  assert.is((await h.request('GET', `${LOG}/leaves/${size + 1}`)).status, 404);
  assert.is((await h.request('GET', `${LOG}/leaves/0`)).status, 400);
  assert.is((await h.request('GET', `${LOG}/proof/inclusion?position=${size}&size=${size + 1}`)).status, 400);
  assert.is((await h.request('GET', `${LOG}/proof/inclusion?position=${size + 1}`)).status, 400);
  assert.is((await h.request('GET', `${LOG}/proof/inclusion`)).status, 400);
  const backwards = await h.request('GET', `${LOG}/proof/consistency?from=3&to=2`);
  assert.is(backwards.status, 400);
  assert.match(backwards.body.detail, `from 3 must be from 1 to to (2); the log holds ${size} events`);
  assert.is((await h.request('GET', `${LOG}/proof/consistency?from=1`)).status, 400);
  assert.is((await h.request('GET', `${LOG}/proof/consistency?from=1&to=x`)).status, 400);
  assert.is((await h.request('GET', `${LOG}/checkpoint?x=1`)).status, 400);
});

it.run();
