import { useEffect, useState } from 'preact/hooks';
import {
  type ApiError,
  type Entry,
  entriesPath,
  getJson,
  type HistoryItem,
  mayWrite,
  query,
  request,
  type Whoami,
} from './api.js';
import { Diff, isoOf, localOf, Notice, Time } from './parts.js';
import { navigate, params } from './router.js';

const HIDDEN = new Set(['id']);

function EntryTable({ entry }: { entry: Entry }) {
  return (
    <table class="entry">
      <caption class="sr-only">Fields</caption>
      <tbody>
        {Object.entries(entry)
          .filter(([field]) => !HIDDEN.has(field))
          .map(([field, value]) => (
            <tr key={field}>
              <th scope="row">{field}</th>
              <td>{JSON.stringify(value)}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

/** The entry as it was: at a version (the position of its event), or at a date-time. */
function useEntryAt(path: string, at: string | null, round: number) {
  const [shown, setShown] = useState<{ entry?: Entry; error?: string }>({});
  useEffect(() => {
    // An answer that comes after the question changed (the history arrived and named a version) is dropped.
    let current = true;
    setShown({});
    getJson<{ item: Entry }>(`${path}${query({ at })}`)
      .then(({ item }) => current && setShown({ entry: item }))
      .catch((error: ApiError) => {
        if (current) setShown({ error: error.code === 'deleted' ? 'deleted then' : error.message });
      });
    return () => {
      current = false;
    };
  }, [path, at, round]);
  return shown;
}

function Moment({ history, base }: { history: HistoryItem[]; base: string }) {
  const search = params();
  const version = Number(search.get('version') ?? history.length);
  const go = (values: Record<string, string | number | undefined>) => navigate(`${base}${query(values)}`, true);
  return (
    <div class="moment">
      <label>
        {`Version ${version} of ${history.length}`}
        <input
          type="range"
          min={1}
          max={Math.max(1, history.length)}
          value={version}
          onInput={(e) => go({ version: (e.currentTarget as HTMLInputElement).value })}
        />
      </label>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const at = isoOf(String(new FormData(e.currentTarget as HTMLFormElement).get('at') ?? ''));
          go({ at });
        }}
      >
        <label>
          As it was at
          <input name="at" type="datetime-local" step={1} value={localOf(search.get('at') ?? '')} />
        </label>
        <button type="submit">Show</button>
      </form>
    </div>
  );
}

function RevertButton({
  path,
  item,
  current,
  done,
}: {
  path: string;
  item: HistoryItem;
  current?: Entry;
  done: (version: number) => void;
}) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string>();
  const version = item.revision + 1;
  const revert = async () => {
    try {
      const ifMatch: Record<string, string> = current ? { 'If-Match': `"${current.version}"` } : {};
      const reply = await request(`${path}/revert`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...ifMatch },
        body: JSON.stringify({ version }),
      });
      setAsking(false);
      // 202: an approval policy holds the revert; it runs once approved and executed.
      if (reply.status === 202)
        navigate(`/fr/console/approvals${query({ show: 'all', id: (await reply.json()).approval.id })}`);
      else done(version);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  if (!asking) return <button type="button" onClick={() => setAsking(true)}>{`Revert to version ${version}`}</button>;
  return (
    <fieldset class="confirm">
      <legend>{`Make it what it was at version ${version}?`}</legend>
      <button type="button" onClick={revert}>
        Confirm revert
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
      {error && <Notice kind="error">{error}</Notice>}
    </fieldset>
  );
}

function History(props: {
  resource: string;
  history: HistoryItem[];
  path: string;
  writer: boolean;
  current?: Entry;
  done: (version: number) => void;
}) {
  const { resource, history, path, writer, current, done } = props;
  return (
    <ol class="history" reversed>
      {[...history].reverse().map((item) => (
        <li key={item.position}>
          <p class="meta">
            <strong>{`Version ${item.revision + 1}`}</strong> · {item.type} · <Time at={item.at} /> · {item.actor}
          </p>
          <Diff diff={item.diff} resource={resource} position={item.position} />
          {writer && current && item.revision + 1 !== current.version && (
            <RevertButton path={path} item={item} current={current} done={done} />
          )}
        </li>
      ))}
    </ol>
  );
}

/** A line for the next entry page drawn (the view is drawn anew when its address changes). */
let flash: string | undefined;
const takeFlash = () => {
  const taken = flash;
  flash = undefined;
  return taken;
};

export function EntryView({ resource, id, who }: { resource: string; id: number; who: Whoami | null }) {
  const path = `${entriesPath(resource)}/${id}`;
  const [history, setHistory] = useState<HistoryItem[]>([]);
  const [round, setRound] = useState(0);
  const search = params();
  const version = search.get('version');
  const at = search.get('at') ?? (version ? String(history[Number(version) - 1]?.position ?? '') : null);
  const now = useEntryAt(path, null, round);
  const then = useEntryAt(path, at || null, round);
  const [reverted, setReverted] = useState(takeFlash);
  useEffect(() => {
    getJson<{ items: HistoryItem[] }>(`${path}/history`).then(
      ({ items }) => setHistory(items),
      () => setHistory([]),
    );
  }, [path, round]);
  return (
    <section aria-labelledby="entry-title">
      <h1 id="entry-title" tabIndex={-1}>{`${resource}/${id}`}</h1>
      <Moment history={history} base={`/fr/console/${resource}/${id}`} />
      {reverted && <Notice kind="info">{reverted}</Notice>}
      <h2>{at ? 'As it was then' : 'Now'}</h2>
      {then.error ? <Notice kind="info">{then.error}</Notice> : then.entry && <EntryTable entry={then.entry} />}
      <h2>History</h2>
      <History
        resource={resource}
        history={history}
        path={path}
        writer={mayWrite(who)}
        current={now.entry}
        done={(version) => {
          // After a revert the page shows the entry's new current version, not the one it was on.
          const said = `Reverted to version ${version}: this is now its current version.`;
          if (at) {
            flash = said;
            navigate(`/fr/console/${resource}/${id}`, true);
          } else {
            setReverted(said);
            setRound(round + 1);
          }
        }}
      />
    </section>
  );
}
