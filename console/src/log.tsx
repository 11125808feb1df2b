import { useEffect, useState } from 'preact/hooks';
import { getJson, query, request } from './api.js';
import { Notice } from './parts.js';
import { type Checkpoint, fromHex, readCheckpoint, sha256, verifyConsistency, verifyInclusion } from './proofs.js';
import { navigate, params } from './router.js';

/**
 * The log's integrity, checked here, in the browser (proofs.ts): the latest checkpoint's signature
 * against the log's public key, a change's inclusion proof against the checkpoint's root, and that
 * the log only grew since a checkpoint kept earlier (a consistency proof).
 */

/** The latest checkpoint, and the log's public key that signs it. */
export async function latest(): Promise<{ point: Checkpoint; key: string }> {
  const note = await (await request('/fr/api/log/checkpoint')).text();
  const key = (await (await request('/fr/api/log/public-key')).text()).trim();
  return { point: await readCheckpoint(note, key), key };
}

/** Whether the change at `position` is in the log the checkpoint commits to. */
export async function included(position: number, point: Checkpoint): Promise<{ ok: boolean; leaf: string }> {
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

/** Whether the log only grew since `kept` (a checkpoint's text), to the latest checkpoint: a sentence, and whether it holds. */
async function grewFrom(kept: string, point: Checkpoint, key: string): Promise<{ ok: boolean; said: string }> {
  const earlier = await readCheckpoint(kept, key);
  if (!earlier.signed)
    return { ok: false, said: "Not verified: the checkpoint you gave is not signed by this log's key." };
  if (earlier.origin !== point.origin) {
    return { ok: false, said: `Not verified: the checkpoint you gave is of another log (${earlier.origin}).` };
  }
  if (earlier.size > point.size) {
    return {
      ok: false,
      said: `Not verified: the checkpoint you gave has ${earlier.size} events, the latest only ${point.size}: the log lost events.`,
    };
  }
  const proof = await getJson<{ hashes: string[] }>(
    `/fr/api/log/proof/consistency${query({ from: earlier.size, to: point.size })}`,
  );
  const ok = await verifyConsistency(earlier.size, point.size, proof.hashes.map(fromHex), earlier.root, point.root);
  return ok
    ? {
        ok,
        said: `Verified here: the log only grew, from the ${earlier.size} events of the checkpoint you kept to the ${point.size} of the latest.`,
      }
    : {
        ok,
        said: `Not verified: the consistency proof does not lead from your checkpoint's root (${earlier.size} events) to the latest: the log was changed, not only grown.`,
      };
}

function ConsistencyCheck({ point, keyText }: { point: Checkpoint; keyText: string }) {
  const [kept, setKept] = useState('');
  const [result, setResult] = useState<{ ok: boolean; said: string }>();
  const submit = (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    grewFrom(kept, point, keyText).then(setResult, (e: Error) => setResult({ ok: false, said: e.message }));
  };
  const load = async (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    if (file) setKept(await file.text());
  };
  return (
    <section aria-labelledby="consistency-title">
      <h2 id="consistency-title">Has the log only grown since a checkpoint you kept?</h2>
      <form class="consistency" onSubmit={submit}>
        <label>
          A checkpoint you kept (paste it)
          <textarea
            name="kept"
            rows={6}
            value={kept}
            onInput={(e) => setKept((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
        <label>
          or load it from a file
          <input name="kept-file" type="file" accept=".txt,text/plain" onChange={load} />
        </label>
        <button type="submit">Check that it only grew</button>
      </form>
      {result && <Notice kind={result.ok ? 'info' : 'error'}>{result.said}</Notice>}
    </section>
  );
}

export function LogView() {
  const [state, setState] = useState<{ point: Checkpoint; key: string } | { error: string }>();
  useEffect(() => {
    latest().then(setState, (e: Error) => setState({ error: e.message }));
  }, []);
  return (
    <section aria-labelledby="log-title">
      <h1 id="log-title" tabIndex={-1}>
        The log's integrity
      </h1>
      {state && 'error' in state && <Notice kind="error">{state.error}</Notice>}
      {state && 'point' in state && (
        <>
          <Notice kind={state.point.signed ? 'info' : 'error'}>
            {state.point.signed
              ? `The latest checkpoint (${state.point.size} events) is signed by the log's key: verified here.`
              : "The latest checkpoint's signature does not verify with the log's key."}
          </Notice>
          <pre class="note">{state.point.note}</pre>
          <InclusionCheck point={state.point} />
          <ConsistencyCheck point={state.point} keyText={state.key} />
        </>
      )}
    </section>
  );
}
