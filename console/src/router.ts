/** The console's views are its URLs: a view can be shared as a link, and the back button works. */

export const BASE = '/fr/console';

export type Route =
  | { view: 'changes' }
  | { view: 'at' }
  | { view: 'log' }
  | { view: 'event-rules' }
  | { view: 'approvals' }
  | { view: 'change-sets' }
  | { view: 'report' }
  | { view: 'entry'; resource: string; id: number }
  | { view: 'unknown' };

export function routeOf(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length).replace(/^\/|\/$/g, '') : '';
  if (rest === '' || rest === 'changes') return { view: 'changes' };
  if (rest === 'at') return { view: 'at' };
  if (rest === 'log') return { view: 'log' };
  if (rest === 'event-rules') return { view: 'event-rules' };
  if (rest === 'approvals') return { view: 'approvals' };
  if (rest === 'change-sets') return { view: 'change-sets' };
  if (rest === 'report') return { view: 'report' };
  const entry = /^([a-z-]+)\/(\d+)$/.exec(rest);
  if (entry) return { view: 'entry', resource: entry[1]!, id: Number(entry[2]) };
  return { view: 'unknown' };
}

const listeners = new Set<() => void>();

export function onNavigate(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Goes to `href` (a path and query of the console), as a new history entry or in place. */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  for (const listener of listeners) listener();
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The current query's parameters. */
export const params = () => new URLSearchParams(location.search);
