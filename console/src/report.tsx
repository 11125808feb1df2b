import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type Change, getJson, query, request } from './api.js';
import { included, latest } from './log.js';
import { isoOf, localOf, Notice } from './parts.js';
import { navigate, params } from './router.js';

/**
 * The audit report of a period, made to be printed and filed (or saved as PDF): what changed, by whom,
 * entry by entry; who read which secret; the approvals executed; the signed checkpoint and the proof,
 * checked here, that the period's last change is in the log it signs. Its print stylesheet leaves out
 * every control, keeps each entry on one page where it can, and heads it with the period and the origin.
 */

interface Period {
  since?: string;
  until?: string;
  resource?: string;
}

interface Report {
  changes: Change[];
  approvals: { id: number; operation: string; requester: string; approvers: string[] }[];
  check: { size: number; position: number; ok: boolean } | { error: string } | undefined;
}

const periodOf = (): Period => {
  const p = params();
  const pick = (name: string) => p.get(name) || undefined;
  return { since: pick('since'), until: pick('until'), resource: pick('resource') };
};

/** Every change of the period, read as one NDJSON stream. */
async function changesOf(period: Period): Promise<Change[]> {
  const reply = await request(`/fr/api/changes${query({ ...period })}`, {
    headers: { Accept: 'application/x-ndjson' },
  });
  const text = await reply.text();
  return text.split('\n').flatMap((line) => (line ? [JSON.parse(line) as Change] : []));
}

async function reportOf(period: Period): Promise<Report> {
  const changes = await changesOf(period);
  const executed = changes.filter((change) => change.type === 'ApprovalExecuted' && change.id !== null);
  const approvals = await Promise.all(
    executed.map(async (change) => {
      const { approval } = await getJson<{
        approval: { id: number; operation: string; requester: string; votes: { actor: string; vote: string }[] };
      }>(`/fr/api/approvals/${change.id}`);
      const approvers = approval.votes.filter((vote) => vote.vote === 'approve').map((vote) => vote.actor);
      return { id: approval.id, operation: approval.operation, requester: approval.requester, approvers };
    }),
  );
  const last = changes.at(-1)?.position;
  let check: Report['check'];
  if (last !== undefined) {
    try {
      const { point } = await latest();
      check = { size: point.size, position: last, ok: (await included(last, point)).ok };
    } catch (error) {
      check = { error: (error as Error).message };
    }
  }
  return { changes, approvals, check };
}

/** An entry's name as its changes show it (its name, display name, libelle or dns), else none. */
function nameOf(changes: Change[]): string {
  for (const change of [...changes].reverse()) {
    for (const field of ['display_name', 'name', 'libelle', 'dns']) {
      const member = change.diff.find((m) => m.field === field);
      if (typeof member?.after === 'string' && member.after) return member.after;
      if (typeof member?.before === 'string' && member.before) return member.before;
    }
  }
  return '';
}

const shown = (value: unknown) => (value === null || value === undefined ? '—' : JSON.stringify(value));

/** Text made safe inside HTML. */
const escaped = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Every entry's changes as one table of HTML, each value escaped, an entry a body of rows under its
 * name: a month of 30,000 changes is drawn by the browser's parser at once, not as 30,000 components,
 * and laid out as one table, not one per entry (bench/console.ts, the report row).
 */
function entriesHtml(entries: Map<string, Change[]>): string {
  const parts = [
    '<table class="report-entries"><thead><tr><th scope="col">#</th><th scope="col">When (UTC)</th><th scope="col">Who</th><th scope="col">What</th></tr></thead>',
  ];
  for (const [entry, changes] of entries) {
    const name = nameOf(changes);
    parts.push(
      `<tbody class="report-entry"><tr><th scope="rowgroup" colspan="4">${escaped(name ? `${entry} ${name}` : entry)}</th></tr>`,
    );
    for (const change of changes) {
      const what = change.diff.map((m) => `${m.field} ${shown(m.before)} → ${shown(m.after)}`).join('; ');
      const at = change.at.replace('T', ' ').replace('Z', '');
      parts.push(
        `<tr><td>${change.position}</td><td>${escaped(at)}</td><td>${escaped(change.actor)}</td><td>${escaped(change.type)}${what ? `: ${escaped(what)}` : ''}</td></tr>`,
      );
    }
    parts.push('</tbody>');
  }
  parts.push('</table>');
  return parts.join('');
}

/** The changes drawn on screen before "Show all" is asked for; printing draws every one. */
const ON_SCREEN = 1_000;

/** The first entries whose changes add up to `limit` (the entry that crosses it included whole). */
function firstOf(entries: Map<string, Change[]>, limit: number): Map<string, Change[]> {
  const first = new Map<string, Change[]>();
  let count = 0;
  for (const [entry, changes] of entries) {
    if (count >= limit) break;
    first.set(entry, changes);
    count += changes.length;
  }
  return first;
}

/**
 * The changes, entry by entry: on screen the first `ON_SCREEN` of them until "Show all" is pressed;
 * every one as soon as the page is printed (`beforeprint`, or the print media taking effect, as when
 * a PDF is made), drawn then and there, before the print layout. A month of 30,000 changes is laid out
 * once, for print, not once for the screen and again for print (bench/console.ts, the report row).
 */
function EntriesTable({ entries, count }: { entries: Map<string, Change[]>; count: number }) {
  const holder = useRef<HTMLDivElement>(null);
  const drawn = useRef<'first' | 'whole'>();
  const [whole, setWhole] = useState(count <= ON_SCREEN);
  const draw = (what: 'first' | 'whole') => {
    if (drawn.current === 'whole' || drawn.current === what || !holder.current) return;
    // Every value in it is escaped by entriesHtml.
    holder.current.innerHTML = entriesHtml(what === 'whole' ? entries : firstOf(entries, ON_SCREEN));
    drawn.current = what;
  };
  useLayoutEffect(() => draw(whole ? 'whole' : 'first'), [whole]);
  useLayoutEffect(() => {
    if (whole) return;
    const printed = () => {
      draw('whole');
      setWhole(true);
    };
    const media = matchMedia('print');
    const changed = (event: MediaQueryListEvent) => event.matches && printed();
    if (media.matches) printed();
    window.addEventListener('beforeprint', printed);
    media.addEventListener('change', changed);
    return () => {
      window.removeEventListener('beforeprint', printed);
      media.removeEventListener('change', changed);
    };
  }, [whole]);
  return (
    <>
      <div ref={holder} />
      {!whole && (
        <p class="no-print">
          {`The first ${firstOf(entries, ON_SCREEN).size} of ${entries.size} entries are shown; printing shows every one. `}
          <button type="button" class="more" onClick={() => setWhole(true)}>
            {`Show all ${count} changes`}
          </button>
        </p>
      )}
    </>
  );
}

function PeriodForm({ period }: { period: Period }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const value = (name: string) => String(form.get(name) ?? '');
    const next = { since: isoOf(value('since')), until: isoOf(value('until')), resource: value('resource') };
    navigate(`/fr/console/report${query(next)}`, true);
  };
  return (
    <form class="filters no-print" onSubmit={submit}>
      <label>
        From
        <input name="since" type="datetime-local" value={period.since ? localOf(period.since) : ''} />
      </label>
      <label>
        Until
        <input name="until" type="datetime-local" value={period.until ? localOf(period.until) : ''} />
      </label>
      <label>
        Resource
        <input name="resource" value={period.resource ?? ''} placeholder="any" />
      </label>
      <button type="submit">Make the report</button>
      <button type="button" class="secondary" onClick={() => window.print()}>
        Print or save as PDF
      </button>
    </form>
  );
}

const periodText = (period: Period) => `${period.since ?? 'the log’s start'} to ${period.until ?? 'now'}`;

/** The changes by entry, in the order each entry first changed; and the secrets read. */
function grouped(changes: Change[]): { entries: Map<string, Change[]>; secrets: Change[] } {
  const entries = new Map<string, Change[]>();
  const secrets: Change[] = [];
  for (const change of changes) {
    if (change.type === 'SecretRevealed') secrets.push(change);
    const entry = change.resource === null ? 'the log itself' : `${change.resource}/${change.id}`;
    const known = entries.get(entry);
    if (known) known.push(change);
    else entries.set(entry, [change]);
  }
  return { entries, secrets };
}

export function ReportView() {
  const period = periodOf();
  const [report, setReport] = useState<Report | { error: string }>();
  const key = JSON.stringify(period);
  useEffect(() => {
    setReport(undefined);
    reportOf(period).then(setReport, (e: Error) => setReport({ error: e.message }));
  }, [key]);
  const { entries, secrets } = useMemo(() => grouped(report && !('error' in report) ? report.changes : []), [report]);
  return (
    <article class="report">
      <header class="report-head">
        <h1>Audit report</h1>
        <p>{`${location.origin} · ${periodText(period)}${period.resource ? ` · ${period.resource}` : ''} · made ${new Date().toISOString()}`}</p>
      </header>
      <PeriodForm period={period} />
      {!report && <p aria-live="polite">Reading the period’s changes…</p>}
      {report && 'error' in report && <Notice kind="error">{report.error}</Notice>}
      {report && !('error' in report) && <ReportBody report={report} entries={entries} secrets={secrets} />}
    </article>
  );
}

function ReportBody({
  report,
  entries,
  secrets,
}: {
  report: Report;
  entries: Map<string, Change[]>;
  secrets: Change[];
}) {
  const { check } = report;
  return (
    <>
      <section class="report-part">
        <h2>The log</h2>
        {!check && <p>No change in this period.</p>}
        {check && 'error' in check && <Notice kind="error">{`Not verified: ${check.error}`}</Notice>}
        {check && 'ok' in check && (
          <p class={check.ok ? 'verified' : 'failed'}>
            {check.ok
              ? `Verified in this browser: the period’s last change (${check.position}) is in the log of ${check.size} events its signed checkpoint commits to.`
              : `NOT verified: the inclusion proof of change ${check.position} does not lead to the signed root.`}
          </p>
        )}
        <p>{`${report.changes.length} changes, ${entries.size} entries, ${secrets.length} secret reads, ${report.approvals.length} approvals executed.`}</p>
      </section>
      <section class="report-part">
        <h2>Secrets read</h2>
        {secrets.length === 0 ? (
          <p>None.</p>
        ) : (
          <ul>
            {secrets.map((c) => (
              <li
                key={c.position}
              >{`${c.at} ${c.actor} read ${String(c.data.field)} of ${c.resource}/${c.id} (change ${c.position})`}</li>
            ))}
          </ul>
        )}
      </section>
      <section class="report-part">
        <h2>Approvals executed</h2>
        {report.approvals.length === 0 ? (
          <p>None.</p>
        ) : (
          <ul>
            {report.approvals.map((a) => (
              <li
                key={a.id}
              >{`approval ${a.id}: ${a.operation} asked by ${a.requester}, approved by ${a.approvers.join(', ') || 'nobody (break glass)'}`}</li>
            ))}
          </ul>
        )}
      </section>
      <section class="report-part">
        <h2>Changes, entry by entry</h2>
        <EntriesTable entries={entries} count={report.changes.length} />
      </section>
    </>
  );
}
