import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running one of this folder's worker entries (`save-worker`, `integrity-worker`).
 * The compiled build runs the entry's `.js` as it is; under tsx (tests, `npm run dev`) a worker does
 * not inherit the main thread's loader, so the entry registers tsx first.
 */
export function startWorker(entry: 'save-worker' | 'integrity-worker', options: WorkerOptions): Worker {
  if (import.meta.url.endsWith('.js')) return new Worker(new URL(`./${entry}.js`, import.meta.url), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = new URL(`./${entry}.ts`, import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then((api) => api.register()).then(() => import(${JSON.stringify(source)}))`;
  return new Worker(code, { ...options, eval: true });
}

/** What the integrity check of the file at `location` finds, checked on a thread of its own (integrity-worker.ts). */
export function integrityApart(location: string): Promise<string[]> {
  const worker = startWorker('integrity-worker', { workerData: { location } });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the integrity check's thread ended (${code}) without an answer`)));
  });
}
