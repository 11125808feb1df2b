import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';
import { methodNotAllowed, RequestError } from './errors.js';

/**
 * The audit console (console/, built into dist/console by `npm run build`), served at /fr/console/:
 * its page for every view (the views are URLs the page reads), and its script and stylesheet. Only
 * this origin may be reached from it: `Content-Security-Policy: default-src 'self'`.
 */

export const CONSOLE_PATH = '/fr/console';

const CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const TYPES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.js.map': 'application/json; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'console.js.LEGAL.txt': 'text/plain; charset=utf-8',
};

/** The package's root: the first directory up from this file that holds package.json. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const built = join(packageRoot(), 'dist/console');
const loaded = new Map<string, Buffer>();

function file(name: string): Buffer {
  let body = loaded.get(name);
  if (!body) {
    const path = join(built, name);
    if (!existsSync(path)) {
      throw new RequestError(503, 'unavailable', 'the console is not built: run npm run build');
    }
    body = readFileSync(path);
    loaded.set(name, body);
  }
  return body;
}

/** Answers every path under /fr/console; anything else goes on. */
export async function consoleRoutes(ctx: Context, next: Next): Promise<void> {
  if (ctx.path !== CONSOLE_PATH && !ctx.path.startsWith(`${CONSOLE_PATH}/`)) return next();
  const asset = /^\/fr\/console\/assets\/([^/]+)$/.exec(ctx.path)?.[1];
  // The route template metrics and logs name it by: the console's pages are one route, its files another.
  (ctx as Context & { _matchedRoute?: string })._matchedRoute =
    asset === undefined ? `${CONSOLE_PATH}/*` : `${CONSOLE_PATH}/assets/{file}`;
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw methodNotAllowed(ctx.method, ['GET', 'HEAD']);
  ctx.set('Content-Security-Policy', CSP);
  if (ctx.path === CONSOLE_PATH) {
    ctx.redirect(`${CONSOLE_PATH}/`);
    return;
  }
  if (asset !== undefined) {
    const type = TYPES[asset];
    if (!type) throw new RequestError(404, 'not_found', `no file ${asset.slice(0, 60)} here`);
    ctx.type = type;
    ctx.body = file(asset);
    return;
  }
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = file('index.html');
}
