import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Change, getJson, query, RESOURCES, request } from './api.js';
import { follow } from './feed.js';
import { Diff, isoOf, Link, localOf, Named, Notice, Time } from './parts.js';
import { navigate, params } from './router.js';

/** The filters of the change log, as the URL holds them. */
const FILTERS = ['resource', 'id', 'actor', 'type', 'request_id', 'since', 'until'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
/** The filters the live feed takes; with any other, the view is not live. */
const LIVE = new Set(['resource', 'id', 'actor', 'type']);
const PAGE = 50;

const filtersOf = (search: URLSearchParams): Filters =>
  Object.fromEntries(FILTERS.flatMap((name) => (search.get(name) ? [[name, search.get(name)!]] : [])));

/**
 * The filters as the URL holds them, to change and apply. Not bound to them after the first render
 * (defaults, not values): what a person is choosing survives the view drawing again as live changes
 * come; the form is made again when the URL's filters change (its key).
 */
function FilterForm({ filters }: { filters: Filters }) {
  const field = (name: keyof Filters, label: string, type = 'text') => {
    const value = type === 'datetime-local' ? localOf(filters[name] ?? '') : (filters[name] ?? '');
    return (
      <label>
        {label}
        <input name={name} type={type} step={type === 'datetime-local' ? 1 : undefined} defaultValue={value} />
      </label>
    );
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const values: Record<string, string> = {};
    for (const name of FILTERS) values[name] = String(form.get(name) ?? '');
    for (const name of ['since', 'until'] as const) values[name] = isoOf(values[name]!);
    navigate(`/fr/console/changes${query(values)}`);
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Filter the changes">
      <label>
        Resource
        <select name="resource">
          <option value="" selected={!filters.resource}>
            any
          </option>
          {[...RESOURCES, 'tokens'].map((r) => (
            <option key={r} value={r} selected={filters.resource === r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      {field('id', 'Entry id')}
      {field('actor', 'Actor')}
      {field('type', 'Event type')}
      {field('request_id', 'Request id')}
      {field('since', 'From', 'datetime-local')}
      {field('until', 'Until', 'datetime-local')}
      <button type="submit">Apply filters</button>
      <Link href="/fr/console/changes">Clear</Link>
      <Link href="/fr/console/changes?type=SecretRevealed">Who read secrets</Link>
    </form>
  );
}

/** One change; drawn again only when it or its mark changes (older pages add rows under the ones shown). */
const ChangeRow = memo(function ChangeRow({ change, fresh }: { change: Change; fresh: boolean }) {
  const entry =
    change.resource && change.id !== null ? (
      <Named resource={change.resource} id={change.id} position={change.position} />
    ) : (
      <span class="muted">—</span>
    );
  const read = change.type === 'SecretRevealed' ? `read ${String(change.data.field)}` : undefined;
  return (
    <tr class={fresh ? 'fresh' : undefined} data-position={change.position}>
      <td data-label="Time">
        <Time at={change.at} />
        {fresh && <span class="badge">New</span>}
      </td>
      <td data-label="Actor">{change.actor}</td>
      <td data-label="Change">{change.type}</td>
      <td data-label="Entry">{entry}</td>
      <td data-label="Fields">
        {read ?? <Diff diff={change.diff} resource={change.resource ?? undefined} position={change.position} />}
        {change.effects.map((effect) => (
          <p key={`${effect.resource}/${effect.id}`} class="effect">
            and <Named resource={effect.resource} id={effect.id} position={change.position} />:
            <Diff diff={effect.diff} resource={effect.resource} position={change.position} />
          </p>
        ))}
      </td>
      <td data-label="In the log">
        <Link href={`/fr/console/log?position=${change.position}`}>{`#${change.position}`}</Link>
      </td>
    </tr>
  );
});

function ChangeTable({ changes, fresh }: { changes: Change[]; fresh: Set<number> }) {
  return (
    <table class="changes">
      <caption class="sr-only">Changes, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Actor</th>
          <th scope="col">Change</th>
          <th scope="col">Entry</th>
          <th scope="col">Fields</th>
          <th scope="col">In the log</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <ChangeRow key={change.position} change={change} fresh={fresh.has(change.position)} />
        ))}
      </tbody>
    </table>
  );
}

/** The current filter's changes as a file, through the API (CSV or NDJSON), with the token in a header. */
async function download(filters: Filters, format: 'csv' | 'ndjson') {
  const accept = format === 'csv' ? 'text/csv' : 'application/x-ndjson';
  const response = await request(`/fr/api/changes${query(filters)}`, { headers: { Accept: accept } });
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: `changes.${format}` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The first page of the filter, then older pages on demand, then live changes on top. */
function useChanges(filters: Filters) {
  const [changes, setChanges] = useState<Change[]>([]);
  const [fresh, setFresh] = useState<Set<number>>(new Set());
  const [state, setState] = useState<{ error?: string; loading: boolean; more: boolean }>({
    loading: true,
    more: false,
  });
  const key = JSON.stringify(filters);
  useEffect(() => {
    let stop = () => {};
    setChanges([]);
    setFresh(new Set());
    setState({ loading: true, more: false });
    getJson<{ items: Change[] }>(`/fr/api/changes${query({ ...filters, order: 'desc', limit: PAGE })}`)
      .then(({ items }) => {
        setChanges(items);
        setState({ loading: false, more: items.length === PAGE });
        if (Object.keys(filters).every((name) => LIVE.has(name))) {
          const live = query(Object.fromEntries(Object.entries(filters).filter(([name]) => LIVE.has(name))));
          stop = follow(`/fr/api/changes/stream${live}`, items[0]?.position ?? 0, (change) => {
            setChanges((list) => (list.some((c) => c.position === change.position) ? list : [change, ...list]));
            setFresh((seen) => new Set(seen).add(change.position));
          });
        }
      })
      .catch((error: Error) => setState({ loading: false, more: false, error: error.message }));
    return () => stop();
  }, [key]);
  const older = async () => {
    const before = changes[changes.length - 1]?.position;
    const { items } = await getJson<{ items: Change[] }>(
      `/fr/api/changes${query({ ...filters, order: 'desc', limit: PAGE, before })}`,
    );
    setChanges((list) => [...list, ...items]);
    setState((s) => ({ ...s, more: items.length === PAGE }));
  };
  return { changes, fresh, state, older };
}

export function ChangesView() {
  const filters = filtersOf(params());
  const { changes, fresh, state, older } = useChanges(filters);
  const live = Object.keys(filters).every((name) => LIVE.has(name));
  const heading = useRef<HTMLHeadingElement>(null);
  return (
    <section aria-labelledby="changes-title">
      <h1 id="changes-title" ref={heading} tabIndex={-1}>
        Changes
      </h1>
      <FilterForm key={query(filters)} filters={filters} />
      <p class="toolbar">
        <span role="status">{live ? 'Live: new changes appear at the top.' : 'Not live for this filter.'}</span>
        <button type="button" onClick={() => download(filters, 'csv')}>
          Download CSV
        </button>
        <button type="button" onClick={() => download(filters, 'ndjson')}>
          Download NDJSON
        </button>
      </p>
      {state.error && <Notice kind="error">{state.error}</Notice>}
      {!state.loading && changes.length === 0 && !state.error && <Notice kind="info">No change matches.</Notice>}
      <ChangeTable changes={changes} fresh={fresh} />
      {state.more && (
        <button type="button" class="more" onClick={older}>
          Older changes
        </button>
      )}
    </section>
  );
}
