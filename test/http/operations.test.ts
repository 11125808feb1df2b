import { spawnSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import { type ReadStreamOptions, type RecordedEvent, StoreUnavailable } from '../../src/event-store/port.js';
import { Lag, Readiness } from '../../src/http/operations.js';
import { BASE, send, startHarness } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

const it = suite('operations: health, readiness, metrics');
const promtool = toolAvailable('promtool', ['--version'], 'PROMTOOL_REQUIRED', "the metrics' check by promtool");

/** A store that can be made to stop answering reads. */
class SwitchableStore extends InMemoryEventStore {
  down = false;
  override async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    if (this.down) throw new StoreUnavailable('switched off');
    return super.readStream(stream, options);
  }

  override async head(stream: string): Promise<number> {
    if (this.down) throw new StoreUnavailable('switched off');
    return super.head(stream);
  }
}

/** Prometheus' conventions: standard process and runtime names, the build, nothing promtool objects to. */
function assertConventions(text: string): void {
  assert.match(text, /^process_resident_memory_bytes \d+$/m, 'standard names, no prefix');
  assert.match(text, /^nodejs_eventloop_lag_seconds [\d.e-]+$/m);
  assert.match(text, /^pmacontrol_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$/m);
  if (!promtool) return;
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: text });
  assert.is(checked.status, 0, `${checked.stdout}${checked.stderr}`);
  assert.is(`${checked.stdout}${checked.stderr}`.trim(), '', 'promtool finds nothing');
}

/** A store whose reads see nothing new while `stuck`: its follower falls behind. */
class StuckStore extends InMemoryEventStore {
  stuck = false;
  private seen = -1;
  override async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const events = await super.readStream(stream, options);
    if (!this.stuck) {
      this.seen = Math.max(this.seen, ...events.map((e) => e.revision));
      return events;
    }
    return events.filter((e) => e.revision <= this.seen);
  }
}

/** The requests of the test above, counted by route template (never a raw path), and the service's own gauges. */
function routesNamed(text: string, position: number): void {
  assert.match(text, /pmacontrol_http_requests_total\{route="\/fr\/api\/config\/tags",method="POST",status="201"\} 1/);
  assert.match(
    text,
    /pmacontrol_http_requests_total\{route="\/fr\/api\/config\/tags\/:id",method="GET",status="200"\} 1/,
  );
  assert.match(text, /pmacontrol_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
  assert.match(text, /pmacontrol_http_requests_total\{route="\/fr\/console\/\*",method="GET",status="200"\} 1/);
  assert.match(text, /route="\/fr\/console\/assets\/\{file\}",method="GET",status="200"\} 1/);
  // An unknown resource keeps the template: a label never takes a value the client chose.
  assert.match(
    text,
    /pmacontrol_http_requests_total\{route="\/fr\/api\/config\/:resource",method="GET",status="404"\} 1/,
  );
  assert.not.match(text, /no-such-resource/);
  assert.not.match(text, /route="\/fr\/api\/config\/tags\/\d/, 'a raw path is never a label');
  assert.match(text, /pmacontrol_http_request_duration_seconds_bucket\{le="0.005",route=/);
  assert.match(text, /pmacontrol_event_store_append_duration_seconds_count [1-9]/);
  assert.match(text, /pmacontrol_events_appended_total [1-9]/);
  assert.match(text, new RegExp(`pmacontrol_projected_position ${position}`));
  assert.match(text, /pmacontrol_follow_lag_events 0/);
}

it('the real process: healthz, readyz with its position, and metrics by route template', async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  try {
    assert.equal((await send(service.url, 'GET', '/healthz')).body, { status: 'ok' });
    const made = await send(service.url, 'POST', `${BASE}/tags`, {
      body: { name: 'm', color: '#000000', background: '#FFFFFF' },
    });
    await send(service.url, 'GET', `${BASE}/tags/${made.body.id}`);
    await send(service.url, 'GET', '/nothing-here');
    // Pages for people, not operations of the API (fetched without the OpenAPI check of `send`).
    assert.is((await fetch(`${service.url}/fr/console/changes`)).status, 200);
    assert.is((await fetch(`${service.url}/fr/console/assets/console.css`)).status, 200);
    await send(service.url, 'GET', `${BASE}/no-such-resource`);
    const ready = await send(service.url, 'GET', '/readyz');
    assert.is(ready.status, 200);
    assert.is(ready.body.status, 'ready');
    assert.ok(ready.body.position >= 9, 'genesis and the tag are folded');
    const metrics = await send(service.url, 'GET', '/metrics');
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
    const text = metrics.text;
    routesNamed(text, ready.body.position);
    assertConventions(text);
  } finally {
    await service.stop();
  }
});

it('readyz: 503 while the store does not answer, ready again when it does; 503 from the start of a stop', async () => {
  const store = new SwitchableStore();
  const readiness = new Readiness();
  const h = await startHarness({ store, readiness });
  try {
    store.down = true;
    const down = await h.request('GET', '/readyz');
    assert.equal([down.status, down.body.status], [503, 'not_ready']);
    assert.match(down.body.reason, /event store does not answer/);
    assert.is((await h.request('GET', '/healthz')).status, 200, 'alive all the same');
    store.down = false;
    assert.is((await h.request('GET', '/readyz')).status, 200);
    readiness.stopping = true;
    assert.equal((await h.request('GET', '/readyz')).body, { status: 'not_ready', reason: 'stopping' });
  } finally {
    await h.close();
  }
});

it('Lag: behind since the first head not folded yet; a follower a little behind is never long behind', () => {
  const lag = new Lag();
  assert.is(lag.observe(10, 10, 0), 0, 'at the head');
  assert.is(lag.observe(12, 10, 100), 0, 'first seen now');
  assert.is(lag.observe(15, 11, 600), 500, 'still behind what it saw at 100');
  assert.is(lag.observe(15, 12, 900), 300, 'folded 12: behind since 15 was seen, at 600');
  assert.is(lag.observe(20, 15, 1000), 0, 'each head folded soon after: never long behind');
  assert.is(lag.observe(20, 20, 5000), 0);
});

it('readyz: a follower that stays behind longer than READY_MAX_LAG_MS is not ready, then ready again', async () => {
  const store = new StuckStore();
  const readiness = new Readiness(100);
  const h = await startHarness({ store, readiness });
  try {
    store.stuck = true;
    await store.append('pmacontrol-config', [{ type: 'SecretRevealed', data: {}, metadata: {} }], h.service.revision);
    assert.is((await h.request('GET', '/readyz')).status, 200, 'just behind');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const lagging = await h.request('GET', '/readyz');
    assert.equal([lagging.status, lagging.body.status], [503, 'not_ready']);
    assert.match(lagging.body.reason, /catching up: 1 events not folded yet, behind for \d+ ms/);
    store.stuck = false;
    await h.service.projector.catchUp();
    assert.is((await h.request('GET', '/readyz')).status, 200);
  } finally {
    await h.close();
  }
});

it.run();
