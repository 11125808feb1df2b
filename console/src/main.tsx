import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, getJson, token, type Whoami, whenUnauthorized } from './api.js';
import { ApprovalsView } from './approvals.js';
import { ChangeSetsView } from './change-sets.js';
import { ChangesView } from './changes.js';
import { EntryView } from './entry.js';
import { Find } from './find.js';
import { LogView } from './log.js';
import { MomentView } from './moment.js';
import { Link, Notice } from './parts.js';
import { ReportView } from './report.js';
import { onNavigate, routeOf } from './router.js';
import { EventRulesView } from './rules.js';

/**
 * The audit console: the change log, an entry's history, the inventory at a moment and the log's
 * integrity, for people. It uses the public API only, with the token the person signs in with.
 */

function SignIn({ reason, done, cancel }: { reason?: string; done: (who: Whoami) => void; cancel?: () => void }) {
  const [error, setError] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget as HTMLFormElement).get('token') ?? '').trim();
    token.set(value);
    try {
      done(await getJson<Whoami>('/fr/api/whoami'));
    } catch (e) {
      token.clear();
      setError((e as ApiError).message);
    }
  };
  return (
    <form class="sign-in" onSubmit={submit} aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in with a token</h2>
      {reason && <Notice kind="error">{reason}</Notice>}
      {error && <Notice kind="error">{error}</Notice>}
      <label>
        Token
        <input name="token" type="password" autoComplete="off" required />
      </label>
      <button type="submit">Sign in</button>
      {cancel && (
        <button type="button" class="secondary" onClick={cancel}>
          Cancel
        </button>
      )}
      <p class="muted">The token is kept for this tab only.</p>
    </form>
  );
}

/** Who you are, and always a way to sign in (the sign-in form once it is shown) or out. */
function Header(props: { who: Whoami | null; signIn?: () => void; signOut: () => void }) {
  const { who, signIn, signOut } = props;
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to the content
      </a>
      <p class="brand">PmaControl configuration · audit</p>
      <nav aria-label="Views">
        <Link href="/fr/console/changes">Changes</Link>
        <Link href="/fr/console/at">At a moment</Link>
        <Link href="/fr/console/log">Log integrity</Link>
        <Link href="/fr/console/report">Report</Link>
        {who && who.role !== 'none' && <Link href="/fr/console/approvals">Approvals</Link>}
        {who && who.role !== 'none' && <Link href="/fr/console/change-sets">Change sets</Link>}
        {who?.role === 'admin' && <Link href="/fr/console/event-rules">Event rules</Link>}
      </nav>
      {who && who.role !== 'none' && <Find />}
      <p class="who" aria-live="polite">
        {who ? `${who.actor} (${who.role}${who.secrets ? ', reads secrets' : ''})` : 'not signed in'}
        {token.get() ? (
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        ) : (
          signIn && (
            <button type="button" onClick={signIn}>
              Sign in
            </button>
          )
        )}
      </p>
    </header>
  );
}

function View({ who }: { who: Whoami | null }) {
  const route = routeOf(location.pathname);
  switch (route.view) {
    case 'changes':
      return <ChangesView />;
    case 'at':
      return <MomentView />;
    case 'log':
      return <LogView />;
    case 'event-rules':
      return <EventRulesView />;
    case 'approvals':
      return <ApprovalsView who={who} />;
    case 'change-sets':
      return <ChangeSetsView who={who} />;
    case 'report':
      return <ReportView />;
    case 'entry':
      return <EntryView resource={route.resource} id={route.id} who={who} />;
    default:
      return <Notice kind="error">There is no such view.</Notice>;
  }
}

function App() {
  const [who, setWho] = useState<Whoami | null>(null);
  const [asking, setAsking] = useState<string | undefined>();
  // Signing in by choice: as anonymous, who may read already, a person signs in with a token of their own.
  const [choosing, setChoosing] = useState(false);
  const [, setPlace] = useState(location.href);
  useEffect(() => onNavigate(() => setPlace(location.href)), []);
  const identify = (reason: string) =>
    getJson<Whoami>('/fr/api/whoami').then(
      (w) => {
        setWho(w);
        if (w.role === 'none') setAsking(reason);
      },
      () => setAsking(reason),
    );
  useEffect(() => {
    whenUnauthorized((detail) => {
      token.clear();
      setWho(null);
      setAsking(detail);
    });
    identify('Sign in to read the change history.');
  }, []);
  const signOut = () => {
    token.clear();
    setWho(null);
    setAsking(undefined);
    identify('Signed out.');
  };
  const canRead = who !== null && who.role !== 'none';
  const form = asking !== undefined || !canRead || choosing;
  return (
    <>
      <Header who={who} signIn={form ? undefined : () => setChoosing(true)} signOut={signOut} />
      <main id="main">
        {form && (
          <SignIn
            reason={asking}
            cancel={canRead && asking === undefined ? () => setChoosing(false) : undefined}
            done={(w) => {
              setWho(w);
              setAsking(undefined);
              setChoosing(false);
            }}
          />
        )}
        {!form && <View key={location.pathname + location.search} who={who} />}
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
root.replaceChildren(); // the page's loading line
render(<App />, root);
