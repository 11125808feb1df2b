// The framework floor: a bare Koa 3 + @koa/router server holding servers in a Map, with the same
// routes and JSON shapes as the service but no validation, no events, no disk. What the service
// costs is measured against this, on the same machine, in the same run, under the same load.
// Usage: tsx bench/anchors/koa-floor.ts   (PORT, default 0: prints {"port": n} on stdout when listening)
import Router from '@koa/router';
import Koa from 'koa';

interface Entry {
  id: number;
  version: number;
  [field: string]: unknown;
}

const entries = new Map<number, Entry>();
let lastId = 0;

async function readBody(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const router = new Router({ prefix: '/fr/api/config/servers' });
router.get('/', (ctx) => {
  ctx.body = { items: [...entries.values()] };
});
router.get('/:id', (ctx) => {
  const entry = entries.get(Number(ctx.params.id));
  if (!entry) ctx.throw(404);
  ctx.body = { item: entry };
});
router.post('/', async (ctx) => {
  const body = await readBody(ctx);
  const id = ++lastId;
  const entry: Entry = { id, ...body, version: 1 };
  entries.set(id, entry);
  ctx.status = 201;
  ctx.body = { id, resource: 'servers', item: entry };
});
router.patch('/:id', async (ctx) => {
  const entry = entries.get(Number(ctx.params.id));
  if (!entry) return ctx.throw(404);
  const body = await readBody(ctx);
  const next: Entry = { ...entry, ...body, version: entry.version + 1 };
  entries.set(next.id, next);
  ctx.body = { id: next.id, resource: 'servers', item: next };
});

const app = new Koa();
app.use(router.routes());
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
