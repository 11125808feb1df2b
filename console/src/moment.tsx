import { useEffect, useState } from 'preact/hooks';
import { type DiffMember, type Entry, getJson, query, RESOURCES } from './api.js';
import { Diff, entryPath, isoOf, Link, localOf, Named, Notice } from './parts.js';
import { navigate, params } from './router.js';

/** How many entries of each list are shown (the count is always whole). */
const SHOWN = 100;

const labelOf = (entry: Entry) => String(entry.name ?? entry.libelle ?? entry.dns ?? entry.path ?? entry.id);

function MomentForm() {
  const search = params();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const value = (name: string) => isoOf(String(form.get(name) ?? ''));
    navigate(`/fr/console/at${query({ at: value('at'), from: value('from'), to: value('to') })}`);
  };
  const input = (name: string, label: string) => (
    <label>
      {label}
      <input name={name} type="datetime-local" step={1} value={localOf(search.get(name) ?? '')} />
    </label>
  );
  return (
    <form class="filters" onSubmit={submit} aria-label="Choose the moments">
      {input('at', 'The inventory at')}
      {input('from', 'Differences from')}
      {input('to', 'to (now when empty)')}
      <button type="submit">Show</button>
    </form>
  );
}

function Inventory({ at }: { at: string }) {
  const [lists, setLists] = useState<{ resource: string; items: Entry[] }[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    Promise.all(
      RESOURCES.map(async (resource) => {
        const { items } = await getJson<{ items: Entry[] }>(`/fr/api/config/${resource}${query({ at })}`);
        return { resource, items };
      }),
    ).then(setLists, (e: Error) => setError(e.message));
  }, [at]);
  if (error) return <Notice kind="error">{error}</Notice>;
  return (
    <div class="inventory">
      {lists.map(({ resource, items }) => (
        <section key={resource} aria-label={resource}>
          <h3>{`${resource} (${items.length})`}</h3>
          <ul>
            {items.slice(0, SHOWN).map((entry) => (
              <li key={entry.id}>
                <Link href={`${entryPath(resource, entry.id)}?at=${encodeURIComponent(at)}`}>{labelOf(entry)}</Link>
                {entry.is_deleted === true && <span class="badge">deleted</span>}
              </li>
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}

interface DiffReport {
  from: { position: number };
  to: { position: number };
  resources: Record<string, { created: Entry[]; updated: { id: number; diff: DiffMember[] }[]; deleted: number[] }>;
}

function Differences({ from, to }: { from: string; to: string }) {
  const [report, setReport] = useState<DiffReport>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    getJson<DiffReport>(`/fr/api/diff${query({ from, to })}`).then(setReport, (e: Error) => setError(e.message));
  }, [from, to]);
  if (error) return <Notice kind="error">{error}</Notice>;
  if (!report) return null;
  const changed = Object.entries(report.resources).filter(
    ([, r]) => r.created.length + r.updated.length + r.deleted.length > 0,
  );
  if (changed.length === 0) return <Notice kind="info">Nothing differs between these moments.</Notice>;
  return (
    <div class="differences">
      {changed.map(([resource, { created, updated, deleted }]) => (
        <section key={resource} aria-label={`${resource} differences`}>
          <h3>{resource}</h3>
          {created.length > 0 && (
            <p>
              {'Created: '}
              {created.map((entry, i) => (
                <span key={entry.id}>
                  {i > 0 && ', '}
                  <Link href={`${entryPath(resource, entry.id)}?at=${report.to.position}`}>{labelOf(entry)}</Link>
                </span>
              ))}
            </p>
          )}
          {updated.map((u) => (
            <div key={u.id}>
              <p>
                {'Updated: '}
                <Named resource={resource} id={u.id} position={report.to.position} />
              </p>
              <Diff diff={u.diff} resource={resource} position={report.to.position} beforeAt={report.from.position} />
            </div>
          ))}
          {deleted.length > 0 && (
            <p>
              {'Deleted: '}
              {deleted.map((id, i) => (
                <span key={id}>
                  {i > 0 && ', '}
                  <Named resource={resource} id={id} position={report.from.position} />
                </span>
              ))}
            </p>
          )}
        </section>
      ))}
    </div>
  );
}

export function MomentView() {
  const search = params();
  const at = search.get('at');
  const from = search.get('from');
  return (
    <section aria-labelledby="moment-title">
      <h1 id="moment-title" tabIndex={-1}>
        The inventory at a moment
      </h1>
      <MomentForm />
      {at && <h2>{`The inventory at ${new Date(at).toLocaleString()}`}</h2>}
      {at && <Inventory at={at} />}
      {from && <h2>Differences</h2>}
      {from && <Differences from={from} to={search.get('to') ?? ''} />}
      {!at && !from && <Notice kind="info">Choose a moment to see the inventory then, or two to compare.</Notice>}
    </section>
  );
}
