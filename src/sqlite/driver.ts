import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const major = Number(process.versions.node.split('.')[0]);

/**
 * The SQLite driver, better-sqlite3, in the release that suits the running Node. Release 12 wraps
 * its objects with Node's own `ObjectWrap`, whose destructor, on Node 24, aborts the process when
 * V8 collects a statement outside a JavaScript context (a collection run by a background task): it
 * happened within seconds of a start. Release 13 is built on Node-API, has no such destructor, and
 * needs Node 22 or later: it is installed beside 12 as `better-sqlite3-napi` and used from Node 22
 * on; Node 20 keeps 12, built against its own headers.
 */
export const DRIVER_PATH = require.resolve(major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3');

// SQLite's URI file names (`file:…?immutable=1`: a copy of a log read without writing, not even the
// -shm file a read of a WAL database makes), enabled as the driver reads this when it loads. No
// path of this service starts with `file:`.
process.env.SQLITE_USE_URI ??= '1';
const Database = require(DRIVER_PATH) as typeof BetterSqlite3;
export default Database;
