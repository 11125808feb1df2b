import { useEffect, useState } from 'preact/hooks';
import { getJson, query, request } from './api.js';
import { Notice } from './parts.js';
import { navigate, params } from './router.js';

/**
 * The log's integrity, checked here, in the browser, with its own SHA-256 and Ed25519 (WebCrypto):
 * the latest checkpoint's signature against the log's public key, and a change's inclusion proof
 * (RFC 9162) against the checkpoint's root.
 */

const hex = (bytes: ArrayBuffer | Uint8Array) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
const fromHex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', joined));
}

const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.of(1), left, right);

/** RFC 9162 §2.1.3.2. */
async function verifyInclusion(leaf: Uint8Array, index: number, size: number, proof: Uint8Array[], root: Uint8Array) {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else r = await nodeHash(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && hex(r) === hex(root);
}

interface Checkpoint {
  note: string;
  origin: string;
  size: number;
  root: Uint8Array;
  signed: boolean;
}

/** The checkpoint, and whether its signature verifies with the log's key (C2SP signed note, Ed25519). */
async function checkpoint(): Promise<Checkpoint> {
  const note = await (await request('/fr/api/log/checkpoint')).text();
  const key = (await (await request('/fr/api/log/public-key')).text()).trim();
  const split = note.lastIndexOf('\n\n', note.length - 2);
  const text = note.slice(0, split + 1);
  const [origin = '', size = '0', root = ''] = text.split('\n');
  const [name, id, encoded = ''] = [key.split('+')[0], key.split('+')[1], key.split('+').slice(2).join('+')];
  const raw = fromBase64(encoded).subarray(1);
  const publicKey = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
  let signed = false;
  for (const line of note
    .slice(split + 2)
    .trim()
    .split('\n')) {
    const [, signer, signature = ''] = /^\u2014 (\S+) (\S+)$/.exec(line) ?? [];
    const bytes = fromBase64(signature);
    if (signer !== name || hex(bytes.subarray(0, 4)) !== id) continue;
    const message = new TextEncoder().encode(text);
    signed ||= await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, bytes.subarray(4), message);
  }
  return { note, origin, size: Number(size), root: fromBase64(root), signed };
}

/** Whether the change at `position` is in the log the checkpoint commits to. */
async function included(position: number, point: Checkpoint): Promise<{ ok: boolean; leaf: string }> {
  const leaf = new Uint8Array(await (await request(`/fr/api/log/leaves/${position}`)).arrayBuffer());
  const proof = await getJson<{ hashes: string[] }>(
    `/fr/api/log/proof/inclusion${query({ position, size: point.size })}`,
  );
  const leafHash = await sha256(Uint8Array.of(0), leaf);
  const ok = await verifyInclusion(leafHash, position - 1, point.size, proof.hashes.map(fromHex), point.root);
  return { ok, leaf: new TextDecoder().decode(leaf) };
}

function InclusionCheck({ point }: { point: Checkpoint }) {
  const position = Number(params().get('position') ?? '') || undefined;
  const [result, setResult] = useState<{ ok: boolean; leaf: string } | { error: string }>();
  useEffect(() => {
    setResult(undefined);
    if (position) included(position, point).then(setResult, (e: Error) => setResult({ error: e.message }));
  }, [position, point]);
  const submit = (event: Event) => {
    event.preventDefault();
    const value = new FormData(event.currentTarget as HTMLFormElement).get('position');
    navigate(`/fr/console/log${query({ position: String(value ?? '') })}`, true);
  };
  return (
    <section aria-labelledby="inclusion-title">
      <h2 id="inclusion-title">Is a change in the log?</h2>
      <form class="filters" onSubmit={submit}>
        <label>
          Position of the change
          <input name="position" type="number" min={1} max={point.size} value={position ?? ''} />
        </label>
        <button type="submit">Check</button>
      </form>
      {result && 'error' in result && <Notice kind="error">{result.error}</Notice>}
      {result && 'ok' in result && (
        <Notice kind={result.ok ? 'info' : 'error'}>
          {result.ok
            ? `Verified here: change ${position} is in the log of ${point.size} events (its inclusion proof leads to the signed root).`
            : `Not verified: the proof of change ${position} does not lead to the signed root.`}
        </Notice>
      )}
      {result && 'leaf' in result && <pre class="leaf">{result.leaf}</pre>}
    </section>
  );
}

export function LogView() {
  const [point, setPoint] = useState<Checkpoint | { error: string }>();
  useEffect(() => {
    checkpoint().then(setPoint, (e: Error) => setPoint({ error: e.message }));
  }, []);
  return (
    <section aria-labelledby="log-title">
      <h1 id="log-title" tabIndex={-1}>
        The log's integrity
      </h1>
      {point && 'error' in point && <Notice kind="error">{point.error}</Notice>}
      {point && 'note' in point && (
        <>
          <Notice kind={point.signed ? 'info' : 'error'}>
            {point.signed
              ? `The latest checkpoint (${point.size} events) is signed by the log's key: verified here.`
              : "The latest checkpoint's signature does not verify with the log's key."}
          </Notice>
          <pre class="note">{point.note}</pre>
          <InclusionCheck point={point} />
        </>
      )}
    </section>
  );
}
