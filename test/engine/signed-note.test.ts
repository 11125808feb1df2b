import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkpointText,
  formatSigner,
  formatVerifier,
  generateSigner,
  openNote,
  parseCheckpoint,
  parseSigner,
  parseVerifier,
  signNote,
} from '../../src/engine/signed-note.js';

/**
 * C2SP signed notes against the published examples (the signed-note specification's, and Go's
 * golang.org/x/mod/sumdb/note PeterNeumann key and note), then notes made here.
 */

const PETER_SIGNER = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const PETER_VERIFIER = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const PETER_TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_NOTE = `${PETER_TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;
const SPEC_VERIFIER = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const SPEC_NOTE =
  'This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';

test("the published keys and notes: Go's PeterNeumann example and the specification's", () => {
  const signer = parseSigner(PETER_SIGNER);
  assert.is(formatVerifier(signer), PETER_VERIFIER);
  assert.is(formatSigner(signer), PETER_SIGNER);
  // Ed25519 signatures are deterministic: the note made here is the published one, byte for byte.
  assert.is(signNote(PETER_TEXT, signer), PETER_NOTE);
  assert.is(openNote(PETER_NOTE, parseVerifier(PETER_VERIFIER)), PETER_TEXT);
  assert.is(openNote(SPEC_NOTE, parseVerifier(SPEC_VERIFIER)), 'This is an example message.\n');
});

test('a changed text, signature or key is refused', () => {
  const key = parseVerifier(PETER_VERIFIER);
  assert.throws(() => openNote(PETER_NOTE.replace('answer', 'Answer'), key), /does not verify/);
  assert.throws(() => openNote(PETER_NOTE.replace('x08go', 'x08gp'), key), /does not verify|no signature/);
  assert.throws(() => openNote(PETER_NOTE, parseVerifier(SPEC_VERIFIER)), /no signature by example\.com\/foo/);
  assert.throws(() => parseVerifier(PETER_VERIFIER.replace('c74f20a3', 'c74f20a4')), /id/);
  assert.throws(() => parseSigner(PETER_SIGNER.replace('c74f20a3', '00000000')), /id/);
  assert.throws(() => openNote('no blank line\n— x y\n', key), /not a signed note/);
});

test('a checkpoint signed here opens with its verifier key and reads back', () => {
  const signer = generateSigner('pmacontrol-config/0123456789abcdef');
  const root = Buffer.alloc(32, 7);
  const note = signNote(checkpointText({ origin: signer.name, size: 42, root }), signer);
  assert.match(
    note,
    /^pmacontrol-config\/0123456789abcdef\n42\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n\n— pmacontrol-config\/0123456789abcdef \S+\n$/,
  );
  const checkpoint = parseCheckpoint(openNote(note, parseVerifier(formatVerifier(signer))));
  assert.equal([checkpoint.origin, checkpoint.size, checkpoint.root.equals(root)], [signer.name, 42, true]);
  assert.is(formatVerifier(parseSigner(formatSigner(signer))), formatVerifier(signer));
  assert.throws(() => parseCheckpoint('origin\n4x\nAAAA\n'), /not a checkpoint/);
});

test.run();
