import { useEffect, useState } from 'preact/hooks';
import { type DiffMember, getJson, query, request, type Whoami } from './api.js';
import { Diff, entryPath, Link, Notice, Time } from './parts.js';
import { navigate, params } from './router.js';

/**
 * Approvals (four eyes): the requests waiting for my vote, or every approval by state; an approval's
 * changes field by field, its policies and votes; approve or reject it with a reason, and, for its
 * requester, withdraw or execute it.
 */

interface Vote {
  actor: string;
  role: string;
  vote: 'approve' | 'reject';
  reason: string | null;
  at: string;
}

export interface Approval {
  id: number;
  state: string;
  operation: string;
  target: { resource: string; id: number | null; version: number | null } | null;
  requester: string;
  changes: { resource: string; id: number | null; diff: DiffMember[] }[];
  policies: { id: number; name: string; approvals: number; roles: string[]; tokens: string[] }[];
  votes: Vote[];
  reason: string | null;
  expires_at: string;
}

const API = '/fr/api/approvals';
const VIEW = '/fr/console/approvals';
const STATES = ['pending', 'approved', 'executed', 'rejected', 'withdrawn', 'expired', 'stale'];

function Target({ approval }: { approval: Approval }) {
  const { target } = approval;
  if (!target) return <>the whole configuration (import)</>;
  if (target.id === null) return <>a new entry of {target.resource}</>;
  return <Link href={entryPath(target.resource, target.id)}>{`${target.resource}/${target.id}`}</Link>;
}

function Votes({ votes }: { votes: Vote[] }) {
  if (votes.length === 0) return <p class="muted">No vote yet.</p>;
  return (
    <ul class="votes">
      {votes.map((vote) => (
        <li key={vote.actor}>
          {`${vote.actor} (${vote.role}) ${vote.vote === 'approve' ? 'approved' : 'rejected'}`} <Time at={vote.at} />
          {vote.reason && <q>{vote.reason}</q>}
        </li>
      ))}
    </ul>
  );
}

/** What the requester gets from the execution: the entry written, or a secret or token shown this once. */
function Executed({ result }: { result: Record<string, unknown> }) {
  const secrets = result.secrets as Record<string, string | null> | undefined;
  return (
    <Notice kind="info">
      Executed.
      {secrets &&
        Object.entries(secrets).map(([field, value]) => (
          <span key={field}>
            {` ${field}: `}
            <code>{value ?? '(none)'}</code>
          </span>
        ))}
      {typeof result.token === 'string' && (
        <span>
          {' Token (shown this once): '}
          <code>{result.token}</code>
        </span>
      )}
    </Notice>
  );
}

function Actions({ approval, who, changed }: { approval: Approval; who: Whoami | null; changed: () => void }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string>();
  const [result, setResult] = useState<Record<string, unknown>>();
  const mine = who?.actor === approval.requester;
  const act = async (step: string) => {
    setError(undefined);
    try {
      const body = reason.trim() ? JSON.stringify({ reason: reason.trim() }) : undefined;
      const reply = await request(`${API}/${approval.id}/${step}`, {
        method: 'POST',
        ...(body ? { headers: { 'Content-Type': 'application/json' }, body } : {}),
      });
      if (step === 'execute') setResult(await reply.json());
      changed();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const open = approval.state === 'pending' || approval.state === 'approved';
  return (
    <form class="vote" onSubmit={(event) => event.preventDefault()}>
      {open && (
        <label>
          Reason
          <textarea name="reason" rows={2} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
      )}
      {approval.state === 'pending' && !mine && (
        <>
          <button type="button" onClick={() => act('approve')}>
            Approve
          </button>
          <button type="button" class="secondary" onClick={() => act('reject')}>
            Reject
          </button>
        </>
      )}
      {mine && approval.state === 'approved' && (
        <button type="button" onClick={() => act('execute')}>
          Execute
        </button>
      )}
      {mine && open && (
        <button type="button" class="secondary" onClick={() => act('withdraw')}>
          Withdraw
        </button>
      )}
      {error && <Notice kind="error">{error}</Notice>}
      {result && <Executed result={result} />}
    </form>
  );
}

function Detail({ id, who, changed }: { id: number; who: Whoami | null; changed: () => void }) {
  const [approval, setApproval] = useState<Approval | { error: string }>();
  const [turn, setTurn] = useState(0);
  useEffect(() => {
    getJson<{ approval: Approval }>(`${API}/${id}`).then(
      (one) => setApproval(one.approval),
      (e: Error) => setApproval({ error: e.message }),
    );
  }, [id, turn]);
  if (!approval) return null;
  if ('error' in approval) return <Notice kind="error">{approval.error}</Notice>;
  const after = () => {
    setTurn(turn + 1);
    changed();
  };
  return (
    <section aria-labelledby="approval-title" class="approval">
      <h2 id="approval-title">
        {`Approval ${approval.id}: ${approval.operation} of `}
        <Target approval={approval} />
      </h2>
      <p>
        {`${approval.state} · asked by ${approval.requester} · expires `}
        <Time at={approval.expires_at} />
        {approval.reason && <q>{approval.reason}</q>}
      </p>
      <h3>What it would change</h3>
      {approval.changes.map((change) => (
        <div key={`${change.resource}/${change.id}`}>
          <p class="muted">
            {change.id === null ? `a new entry of ${change.resource}` : `${change.resource}/${change.id}`}
          </p>
          <Diff diff={change.diff} />
        </div>
      ))}
      <h3>Policies</h3>
      <ul>
        {approval.policies.map((policy) => (
          <li key={policy.id}>
            {`${policy.name}: ${policy.approvals} approval${policy.approvals > 1 ? 's' : ''} by ${[...policy.roles.map((r) => `any ${r}`), ...policy.tokens].join(', ')}`}
          </li>
        ))}
      </ul>
      <h3>Votes</h3>
      <Votes votes={approval.votes} />
      <Actions approval={approval} who={who} changed={after} />
    </section>
  );
}

function Row({ approval, chosen, show, state }: { approval: Approval; chosen: boolean; show: string; state: string }) {
  return (
    <tr class={chosen ? 'chosen' : undefined}>
      <td>
        <Link href={`${VIEW}${query({ show, state, id: approval.id })}`}>{`#${approval.id}`}</Link>
      </td>
      <td>{approval.state}</td>
      <td>{approval.operation}</td>
      <td>
        <Target approval={approval} />
      </td>
      <td>{approval.requester}</td>
      <td>{`${approval.votes.filter((v) => v.vote === 'approve').length} / ${Math.max(...approval.policies.map((p) => p.approvals))}`}</td>
      <td>
        <Time at={approval.expires_at} />
      </td>
    </tr>
  );
}

export function ApprovalsView({ who }: { who: Whoami | null }) {
  const show = params().get('show') ?? 'mine';
  const state = params().get('state') ?? (show === 'mine' ? '' : 'pending');
  const chosen = Number(params().get('id') ?? '') || undefined;
  const [items, setItems] = useState<Approval[] | { error: string }>();
  const [turn, setTurn] = useState(0);
  useEffect(() => {
    const filter = show === 'mine' ? { approver: 'me', state: 'pending' } : { state: state || undefined };
    getJson<{ items: Approval[] }>(`${API}${query({ ...filter, limit: 1000 })}`).then(
      (page) => setItems(page.items),
      (e: Error) => setItems({ error: e.message }),
    );
  }, [show, state, turn]);
  const choose = (next: { show?: string; state?: string }) =>
    navigate(`${VIEW}${query({ show: next.show ?? show, state: next.state ?? state })}`, true);
  return (
    <>
      <h1>Approvals</h1>
      <p class="muted">Requests an approval policy holds until other people approve them.</p>
      <div class="filters">
        <label>
          Show
          <select name="show" onChange={(e) => choose({ show: e.currentTarget.value, state: '' })}>
            <option value="mine" selected={show === 'mine'}>
              waiting for my vote
            </option>
            <option value="all" selected={show === 'all'}>
              every approval
            </option>
          </select>
        </label>
        {show === 'all' && (
          <label>
            State
            <select name="state" onChange={(e) => choose({ state: e.currentTarget.value })}>
              {['', ...STATES].map((one) => (
                <option key={one} value={one} selected={one === state}>
                  {one || 'any'}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {items && 'error' in items && <Notice kind="error">{items.error}</Notice>}
      {Array.isArray(items) && items.length === 0 && (
        <p>{show === 'mine' ? 'Nothing waits for your vote.' : 'No approval here.'}</p>
      )}
      {Array.isArray(items) && items.length > 0 && (
        <table class="approvals">
          <thead>
            <tr>
              <th scope="col">Approval</th>
              <th scope="col">State</th>
              <th scope="col">Operation</th>
              <th scope="col">Target</th>
              <th scope="col">Asked by</th>
              <th scope="col">Approvals</th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {items.map((approval) => (
              <Row key={approval.id} approval={approval} chosen={approval.id === chosen} show={show} state={state} />
            ))}
          </tbody>
        </table>
      )}
      {chosen && <Detail id={chosen} who={who} changed={() => setTurn(turn + 1)} />}
    </>
  );
}
