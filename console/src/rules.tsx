import { useEffect, useState } from 'preact/hooks';
import { type Entry, getJson, query } from './api.js';
import { entryPath, Link, Notice, Time } from './parts.js';
import { navigate, params } from './router.js';

/**
 * Event rules (admins): each rule with what it sends where and how far its delivery is (its status),
 * and a rule's deliveries — delivered, retrying, dead, pending — with their last error.
 */

interface Status {
  cursor: number | null;
  lag: number | null;
  last_error: string | null;
  last_error_at: string | null;
  delivering: string | null;
}

interface Delivery {
  position: number;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_at: string | null;
}

const STATES = ['', 'delivered', 'retrying', 'dead', 'pending'];
const RULES = '/fr/api/event-rules';

function RuleRow({ rule, open }: { rule: Entry; open: boolean }) {
  const [status, setStatus] = useState<Status | { error: string }>();
  useEffect(() => {
    getJson<Status>(`${RULES}/${rule.id}/status`).then(setStatus, (e: Error) => setStatus({ error: e.message }));
  }, [rule.id]);
  const known = status && !('error' in status) ? status : undefined;
  return (
    <tr class={open ? 'chosen' : undefined}>
      <td>
        <Link href={entryPath('event-rules', rule.id)}>{String(rule.name)}</Link>
      </td>
      <td>{rule.enabled ? 'enabled' : 'disabled'}</td>
      <td>
        {(rule.on as string[]).join(', ')}
        {(rule.types as string[]).length > 0 && <span class="muted"> ({(rule.types as string[]).join(', ')})</span>}
      </td>
      <td class="wrap">{String(rule.target_url)}</td>
      <td>{known ? (known.lag === null ? 'not started' : `${known.lag} behind (at ${known.cursor})`) : ''}</td>
      <td class="wrap">{status && 'error' in status ? status.error : (known?.last_error ?? 'none')}</td>
      <td>
        <Link href={`/fr/console/event-rules${query({ rule: rule.id })}`}>Deliveries</Link>
      </td>
    </tr>
  );
}

function Deliveries({ rule, name }: { rule: number; name: string }) {
  const state = params().get('state') ?? '';
  const [items, setItems] = useState<Delivery[] | { error: string }>();
  useEffect(() => {
    getJson<{ items: Delivery[] }>(`${RULES}/${rule}/deliveries${query({ state, limit: 1000 })}`).then(
      (page) => setItems(page.items),
      (e: Error) => setItems({ error: e.message }),
    );
  }, [rule, state]);
  const choose = (event: Event) =>
    navigate(
      `/fr/console/event-rules${query({ rule, state: (event.currentTarget as HTMLSelectElement).value })}`,
      true,
    );
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries of {name}</h2>
      <label>
        State
        <select name="state" onChange={choose}>
          {STATES.map((one) => (
            <option key={one} value={one} selected={one === state}>
              {one || 'any'}
            </option>
          ))}
        </select>
      </label>
      {items && 'error' in items && <Notice kind="error">{items.error}</Notice>}
      {Array.isArray(items) && items.length === 0 && <p>No delivery{state ? ` ${state}` : ''} yet.</p>}
      {Array.isArray(items) && items.length > 0 && (
        <table class="deliveries">
          <thead>
            <tr>
              <th scope="col">Change</th>
              <th scope="col">State</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <tr key={d.position}>
                <td>
                  <Link href={`/fr/console/log${query({ position: d.position })}`}>{d.position}</Link>
                </td>
                <td>{d.state}</td>
                <td>{d.attempts}</td>
                <td class="wrap">{d.last_error ?? (d.last_status === null ? '' : String(d.last_status))}</td>
                <td>{d.next_at ? <Time at={d.next_at} /> : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function EventRulesView() {
  const [rules, setRules] = useState<Entry[] | { error: string }>();
  useEffect(() => {
    getJson<{ items: Entry[] }>(RULES).then(
      (page) => setRules(page.items),
      (e: Error) => setRules({ error: e.message }),
    );
  }, []);
  const chosen = Number(params().get('rule') ?? '') || undefined;
  const list = Array.isArray(rules) ? rules : [];
  const open = list.find((rule) => rule.id === chosen);
  return (
    <>
      <h1>Event rules</h1>
      <p class="muted">Which changes are sent where, and how far each rule's delivery is.</p>
      {rules && 'error' in rules && <Notice kind="error">{rules.error}</Notice>}
      {Array.isArray(rules) && rules.length === 0 && <p>No event rule yet.</p>}
      {list.length > 0 && (
        <table class="rules">
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">State</th>
              <th scope="col">Sends changes of</th>
              <th scope="col">To</th>
              <th scope="col">Delivery</th>
              <th scope="col">Last error</th>
              <th scope="col">
                <span class="sr-only">Deliveries</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((rule) => (
              <RuleRow key={rule.id} rule={rule} open={rule.id === chosen} />
            ))}
          </tbody>
        </table>
      )}
      {open && <Deliveries rule={open.id} name={String(open.name)} />}
    </>
  );
}
