/**
 * Find (section 13): entries by any name they hold or held, a wing of its own. Its index is a read
 * model kept in memory (names.ts): built from the state at start, kept up to date from every fold,
 * its past read from the change log in the background (a renamed or deleted entry by its old name);
 * search.ts ranks, routes.ts serves `GET /fr/api/search`.
 */
export { type Finder, finder } from './finder.js';
export { searchRoutes } from './routes.js';
