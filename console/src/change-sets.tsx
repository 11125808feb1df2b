import { useEffect, useState } from 'preact/hooks';
import { getJson, query, request, type Whoami } from './api.js';
import { entryPath, Link, Notice, Time } from './parts.js';
import { params } from './router.js';

/**
 * Change sets: each with its state and how many writes it holds; a change set's diff — each field at
 * its base, in it, now — with its conflicts, a side chosen for each, then merged (or closed; once
 * merged, reverted).
 */

interface ChangeSet {
  id: number;
  name: string;
  state: string;
  base: number;
  created_by: string;
  staged: number;
  created_at: string;
}

interface Field {
  resource: string;
  id: number;
  field: string;
  base: unknown;
  change_set: unknown;
  now: unknown;
  conflict: boolean;
}

interface Refused {
  operation: number;
  write: string;
  detail: string;
}

const API = '/fr/api/change-sets';
const VIEW = '/fr/console/change-sets';
const shown = (value: unknown) => (value === null || value === undefined ? '—' : JSON.stringify(value));
const keyOf = (field: Field) => `${field.resource}/${field.id}/${field.field}`;

function FieldRow({ field, side, choose }: { field: Field; side?: string; choose: (side: string) => void }) {
  return (
    <tr class={field.conflict ? 'conflict' : undefined}>
      <td>
        <Link href={entryPath(field.resource, field.id)}>{`${field.resource}/${field.id}`}</Link>
      </td>
      <td>{field.field}</td>
      <td>{shown(field.base)}</td>
      <td>{shown(field.change_set)}</td>
      <td>{shown(field.now)}</td>
      <td>
        {field.conflict ? (
          <label>
            <span class="sr-only">{`Which side wins ${keyOf(field)}`}</span>
            <select name={keyOf(field)} onChange={(e) => choose(e.currentTarget.value)}>
              <option value="" selected={!side}>
                conflict: choose
              </option>
              <option value="change-set" selected={side === 'change-set'}>
                the change set's
              </option>
              <option value="main" selected={side === 'main'}>
                keep now's
              </option>
            </select>
          </label>
        ) : (
          ''
        )}
      </td>
    </tr>
  );
}

function Actions({ set, resolve, done }: { set: ChangeSet; resolve: Record<string, string>; done: () => void }) {
  const [error, setError] = useState<string>();
  const act = async (step: string, body?: object) => {
    setError(undefined);
    try {
      const init = body ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {};
      await request(`${API}/${set.id}/${step}`, { method: 'POST', ...init });
      done();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <div class="toolbar">
      {set.state === 'open' && (
        <>
          <button type="button" onClick={() => act('merge', { resolve })}>
            Merge
          </button>
          <button type="button" class="secondary" onClick={() => act('close')}>
            Close
          </button>
        </>
      )}
      {set.state === 'merged' && (
        <button type="button" onClick={() => act('revert')}>
          Revert
        </button>
      )}
      {error && <Notice kind="error">{error}</Notice>}
    </div>
  );
}

function Detail({ id, changed }: { id: number; changed: () => void }) {
  const [diff, setDiff] = useState<
    { change_set: ChangeSet; fields: Field[]; refused: Refused[] } | { error: string }
  >();
  const [resolve, setResolve] = useState<Record<string, string>>({});
  const [turn, setTurn] = useState(0);
  useEffect(() => {
    getJson<{ change_set: ChangeSet; fields: Field[]; refused: Refused[] }>(`${API}/${id}/diff`).then(
      setDiff,
      (e: Error) => setDiff({ error: e.message }),
    );
  }, [id, turn]);
  if (!diff) return null;
  if ('error' in diff) return <Notice kind="error">{diff.error}</Notice>;
  const { change_set: set, fields, refused } = diff;
  const conflicts = fields.filter((f) => f.conflict).length;
  const choose = (field: Field) => (side: string) => setResolve({ ...resolve, [keyOf(field)]: side });
  return (
    <section aria-labelledby="change-set-title" class="approval">
      <h2 id="change-set-title">{`Change set ${set.id}: ${set.name}`}</h2>
      <p>
        {`${set.state} · ${set.staged} writes · opened by ${set.created_by} at position ${set.base} · `}
        <Time at={set.created_at} />
      </p>
      {conflicts > 0 && (
        <Notice kind="info">{`${conflicts} field(s) changed since the base: choose which side wins each.`}</Notice>
      )}
      {refused.map((r) => (
        <Notice
          key={r.operation}
          kind="error"
        >{`Write ${r.operation + 1} (${r.write}) is refused now: ${r.detail}`}</Notice>
      ))}
      <table class="change-set-diff">
        <thead>
          <tr>
            <th scope="col">Entry</th>
            <th scope="col">Field</th>
            <th scope="col">At the base</th>
            <th scope="col">In the change set</th>
            <th scope="col">Now</th>
            <th scope="col">Conflict</th>
          </tr>
        </thead>
        <tbody>
          {fields.map((field) => (
            <FieldRow key={keyOf(field)} field={field} side={resolve[keyOf(field)]} choose={choose(field)} />
          ))}
        </tbody>
      </table>
      <Actions
        set={set}
        resolve={Object.fromEntries(Object.entries(resolve).filter(([, side]) => side !== ''))}
        done={() => {
          setTurn(turn + 1);
          changed();
        }}
      />
    </section>
  );
}

export function ChangeSetsView(_props: { who: Whoami | null }) {
  const chosen = Number(params().get('id') ?? '') || undefined;
  const [items, setItems] = useState<ChangeSet[] | { error: string }>();
  const [turn, setTurn] = useState(0);
  useEffect(() => {
    getJson<{ items: ChangeSet[] }>(API).then(
      (page) => setItems(page.items),
      (e: Error) => setItems({ error: e.message }),
    );
  }, [turn]);
  return (
    <>
      <h1>Change sets</h1>
      <p class="muted">Writes staged together, reviewed as one diff, merged and reverted as one.</p>
      {items && 'error' in items && <Notice kind="error">{items.error}</Notice>}
      {Array.isArray(items) && items.length === 0 && <p>No change set yet.</p>}
      {Array.isArray(items) && items.length > 0 && (
        <table class="change-sets">
          <thead>
            <tr>
              <th scope="col">Change set</th>
              <th scope="col">State</th>
              <th scope="col">Writes</th>
              <th scope="col">Opened by</th>
            </tr>
          </thead>
          <tbody>
            {items.map((set) => (
              <tr key={set.id} class={set.id === chosen ? 'chosen' : undefined}>
                <td>
                  <Link href={`${VIEW}${query({ id: set.id })}`}>{`#${set.id} ${set.name}`}</Link>
                </td>
                <td>{set.state}</td>
                <td>{set.staged}</td>
                <td>{set.created_by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {chosen && <Detail id={chosen} changed={() => setTurn(turn + 1)} />}
    </>
  );
}
