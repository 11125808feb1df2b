import type { Context } from 'koa';
import type { ConfigService } from '../application/service.js';
import { invalidQuery, type RouteModule, singleParameters } from '../http/route-module.js';
import type { Finder } from './finder.js';
import { searchOperation } from './operations.js';
import { search } from './search.js';

/** `GET /fr/api/search?q=&limit=` (reader): entries by any name they hold or held, best first. */
function find(ctx: Context, service: ConfigService, finder?: Finder): void {
  const { q, limit = '20' } = singleParameters(ctx, ['q', 'limit']);
  if (q === undefined || q.trim() === '' || q.length > 200) throw invalidQuery('q is 1 to 200 characters to look for');
  if (!/^[1-9][0-9]{0,2}$/.test(limit) || Number(limit) > 200) throw invalidQuery('limit must be from 1 to 200');
  if (!finder) throw invalidQuery('this instance does not search');
  const items = search(finder.index, service.state, q, Number(limit)).map(({ rank: _rank, ...hit }) => hit);
  ctx.body = { items, past_read: finder.pastRead };
}

/**
 * The route module; `finder`: the instance's index (absent in `openapi`), or how to make it at the
 * first search (an instance that must not read its change log before then: a test's).
 */
export function searchRoutes(finder?: Finder | (() => Finder)): RouteModule {
  let made: Finder | undefined;
  const found = () => {
    if (typeof finder !== 'function') return finder;
    made ??= finder();
    return made;
  };
  return {
    tags: [{ name: 'search', description: 'Find entries by any name they hold or held' }],
    routes: [{ kind: 'search', method: 'GET', path: '/fr/api/search', access: 'reader' }],
    operations: { search: searchOperation },
    handlers: ({ service }) => ({ search: (ctx) => find(ctx, service, found()) }),
  };
}
