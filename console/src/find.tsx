import { useEffect, useRef, useState } from 'preact/hooks';
import { getJson, query } from './api.js';
import { entryPath, Link } from './parts.js';

/**
 * Find: one box that finds entries by any name they hold or held (name, display name, ip, hostname,
 * dns, libelle, tag name), best first, each leading to the entry's page.
 */

interface Hit {
  resource: string;
  id: number;
  label: string;
  deleted: boolean;
  matched: { field: string; value: string; current: boolean };
}

/**
 * Asks for what the box holds at once, with no pause after a keystroke, and never has more than one
 * question on the way: what is typed meanwhile is asked when the answer comes back, and only an answer
 * to what the box holds then is drawn (bench/console.ts, the Find rows).
 */
function useFound(q: string): Hit[] | undefined {
  const [hits, setHits] = useState<Hit[] | undefined>();
  const wanted = useRef('');
  const asking = useRef(false);
  const ask = (text: string) => {
    asking.current = true;
    getJson<{ items: Hit[] }>(`/fr/api/search${query({ q: text, limit: 10 })}`)
      .then(
        (found) => found.items,
        () => [],
      )
      .then((items) => {
        asking.current = false;
        if (wanted.current === text) setHits(items);
        else if (wanted.current.trim() !== '') ask(wanted.current);
      });
  };
  useEffect(() => {
    wanted.current = q;
    if (q.trim() === '') setHits(undefined);
    else if (!asking.current) ask(q);
  }, [q]);
  return hits;
}

export function Find() {
  const [q, setQ] = useState('');
  const hits = useFound(q);
  return (
    <div class="find">
      <search aria-label="Find an entry">
        <form onSubmit={(e) => e.preventDefault()}>
          <label>
            <span class="sr-only">Find</span>
            <input
              type="search"
              name="q"
              placeholder="Find: a name, an ip, a tag…"
              value={q}
              onInput={(e) => setQ(e.currentTarget.value)}
            />
          </label>
        </form>
      </search>
      {hits && (
        <ul class="found" aria-live="polite" aria-label="Entries found">
          {hits.length === 0 && <li class="muted">Nothing holds or held that name.</li>}
          {hits.map((hit) => (
            <li key={`${hit.resource}/${hit.id}`}>
              <Link href={entryPath(hit.resource, hit.id)}>{`${hit.resource}/${hit.id} ${hit.label}`}</Link>
              {hit.deleted && <span class="muted"> (deleted)</span>}
              {(!hit.matched.current || hit.matched.value !== hit.label) && (
                <span class="muted">{` — ${hit.matched.field} ${hit.matched.current ? '' : 'was '}"${hit.matched.value}"`}</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
