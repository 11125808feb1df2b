import type { ComponentChildren } from 'preact';
import type { DiffMember } from './api.js';
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
 * A field diff: each field with its value before and after. Colour is not the only signal: the old
 * value is struck through and labelled, the new one labelled.
 */
export function Diff({ diff }: { diff: DiffMember[] }) {
  if (diff.length === 0) return <span class="muted">no field changed</span>;
  return (
    <dl class="diff">
      {diff.map(({ field, before, after }) => (
        <div key={field} class="diff-row">
          <dt>{field}</dt>
          <dd>
            {before !== null && before !== undefined ? (
              <del>
                <span class="sr-label">was </span>
                {shown(before)}
              </del>
            ) : (
              <span class="muted">(none)</span>
            )}
            <span aria-hidden="true"> → </span>
            {after !== null && after !== undefined ? (
              <ins>
                <span class="sr-label">now </span>
                {shown(after)}
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

export const entryPath = (resource: string, id: number) => `/fr/console/${resource}/${id}`;

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
