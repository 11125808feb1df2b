import type { ComponentChildren } from 'preact';
import type { DiffMember } from './api.js';
import { useName } from './names.js';
import { REFERENCES } from './references.js';
import { navigate } from './router.js';

/** A time in the viewer's zone, with UTC on hover (and for screen readers, in `datetime`). */
export function Time({ at }: { at: string }) {
  const date = new Date(at);
  return (
    <time dateTime={at} title={`${date.toISOString().replace('T', ' ').replace('Z', ' UTC')}`}>
      {date.toLocaleString()}
    </time>
  );
}

const shown = (value: unknown) => (value === null || value === undefined ? '—' : JSON.stringify(value));

/**
 * An entry named as it was at `position` of the log, linked to its page at that moment: `servers/12
 * db-paris-02` (`bare`: the id, then the name in brackets, as inside a diff).
 */
export function Named({
  resource,
  id,
  position,
  bare,
}: {
  resource: string;
  id: number;
  position: number;
  bare?: boolean;
}) {
  const name = useName(resource, id, position);
  const path = entryPath(resource, id);
  const href = `${path}${path.includes('?') ? '&' : '?'}at=${position}`;
  if (bare) return <Link href={href}>{name ? `${id} (${name})` : String(id)}</Link>;
  return <Link href={href}>{name ? `${resource}/${id} ${name}` : `${resource}/${id}`}</Link>;
}

/** A value of a diff: the ids of a reference named as they were at `position`. */
function Value({ value, target, position }: { value: unknown; target?: string; position: number }) {
  if (!target || position < 1) return <>{shown(value)}</>;
  const ids = Array.isArray(value) ? value : [value];
  if (!ids.every((id) => Number.isInteger(id))) return <>{shown(value)}</>;
  const named = ids.map((id, i) => (
    <span key={String(id)}>
      {i > 0 && ', '}
      <Named resource={target} id={id as number} position={position} bare />
    </span>
  ));
  return Array.isArray(value) ? <>[{named}]</> : named[0]!;
}

/**
 * A field diff: each field with its value before and after. Colour is not the only signal: the old
 * value is struck through and labelled, the new one labelled. Given the entry's resource and the
 * change's position, an id that stands for an entry is named as it was: before the change for the
 * old value, after it for the new one.
 */
export function Diff(props: { diff: DiffMember[]; resource?: string; position?: number; beforeAt?: number }) {
  const { diff, resource, position = 0, beforeAt = position - 1 } = props;
  if (diff.length === 0) return <span class="muted">no field changed</span>;
  const references = (resource && REFERENCES[resource]) || {};
  return (
    <dl class="diff">
      {diff.map(({ field, before, after }) => (
        <div key={field} class="diff-row">
          <dt>{field}</dt>
          <dd>
            {before !== null && before !== undefined ? (
              <del>
                <span class="sr-label">was </span>
                <Value value={before} target={references[field]} position={beforeAt} />
              </del>
            ) : (
              <span class="muted">(none)</span>
            )}
            <span aria-hidden="true"> → </span>
            {after !== null && after !== undefined ? (
              <ins>
                <span class="sr-label">now </span>
                <Value value={after} target={references[field]} position={position} />
              </ins>
            ) : (
              <span class="muted">(removed)</span>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** A link inside the console: followed without reloading the page. */
export function Link({ href, children, ...rest }: { href: string; children: ComponentChildren; class?: string }) {
  return (
    <a
      href={href}
      {...rest}
      onClick={(event) => {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** An entry's page; an approval's, a change set's are their views with it open (a staged write: the change sets). */
export const entryPath = (resource: string, id: number) =>
  resource === 'approvals'
    ? `/fr/console/approvals?show=all&id=${id}`
    : resource === 'change-sets'
      ? `/fr/console/change-sets?id=${id}`
      : resource === 'change-set-operations'
        ? '/fr/console/change-sets'
        : `/fr/console/${resource}/${id}`;

/** An error or a note for everyone, screen readers included. */
export function Notice({ kind, children }: { kind: 'error' | 'info'; children: ComponentChildren }) {
  return (
    <p class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}

/** A date-time input's value (the viewer's zone) as ISO 8601 UTC; '' stays ''. */
export const isoOf = (local: string) => (local ? new Date(local).toISOString() : '');

/** ISO 8601 as a date-time input's value, in the viewer's zone. */
export function localOf(iso: string): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
