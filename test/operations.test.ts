import { spawnSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InMemoryEventStore } from '../src/event-store/in-memory/store.js';
import { type ReadStreamOptions, type RecordedEvent, StoreUnavailable } from '../src/event-store/port.js';
import { Readiness } from '../src/http/operations.js';
import { BASE, send, startHarness } from './support/harness.js';
import { spawnService, tempDir } from './support/process.js';
import { toolAvailable } from './support/tools.js';

const it = suite('operations: health, readiness, metrics');
const promtool = toolAvailable('promtool', ['--version'], 'PROMTOOL_REQUIRED', "the metrics' check by promtool");

/** A store that can be made to stop answering reads. */
class SwitchableStore extends InMemoryEventStore {
  down = false;
  override async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    if (this.down) throw new StoreUnavailable('switched off');
    return super.readStream(stream, options);
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

it('the real process: healthz, readyz with its position, and metrics by route template', async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  try {
    assert.equal((await send(service.url, 'GET', '/healthz')).body, { status: 'ok' });
    const made = await send(service.url, 'POST', `${BASE}/tags`, {
      body: { name: 'm', color: '#000000', background: '#FFFFFF' },
    });
    await send(service.url, 'GET', `${BASE}/tags/${made.body.id}`);
    await send(service.url, 'GET', '/nothing-here');
    await send(service.url, 'GET', `${BASE}/no-such-resource`);
    const ready = await send(service.url, 'GET', '/readyz');
    assert.is(ready.status, 200);
    assert.is(ready.body.status, 'ready');
    assert.ok(ready.body.position >= 9, 'genesis and the tag are folded');
    const metrics = await send(service.url, 'GET', '/metrics');
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
    const text = metrics.text;
    assert.match(
      text,
      /pmacontrol_http_requests_total\{route="\/fr\/api\/config\/tags",method="POST",status="201"\} 1/,
    );
    assert.match(
      text,
      /pmacontrol_http_requests_total\{route="\/fr\/api\/config\/tags\/:id",method="GET",status="200"\} 1/,
    );
    assert.match(text, /pmacontrol_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
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
    assert.match(text, new RegExp(`pmacontrol_projected_position ${ready.body.position}`));
    assert.match(text, /pmacontrol_follow_lag_events 0/);
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

it.run();
