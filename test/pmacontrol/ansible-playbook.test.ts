import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { ROOT, runCli, spawnService, tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

const ansibleAvailable = () =>
  toolAvailable(
    'ansible-playbook',
    ['--version'],
    'ANSIBLE_REQUIRED',
    'docs/ansible/register.yml run by ansible-playbook',
  );

const it = suite(
  'docs/ansible/register.yml: the playbook of docs/automation.md registers servers, then changes nothing',
);

function playbook(url: string, token: string, home: string) {
  const run = spawnSync(
    'ansible-playbook',
    ['-i', join(ROOT, 'docs/ansible/hosts.ini'), join(ROOT, 'docs/ansible/register.yml'), '-e', `config_url=${url}`],
    {
      env: {
        ...process.env,
        PMACONTROL_CONFIG_TOKEN: token,
        HOME: home,
        ANSIBLE_LOCAL_TEMP: home,
        ANSIBLE_NOCOLOR: '1',
        ANSIBLE_PYTHON_INTERPRETER: 'auto_silent',
      },
      timeout: 120_000,
    },
  );
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

(ansibleAvailable() ? it : it.skip)('two runs: changed=1, then changed=0 and no event recorded', async () => {
  const dir = tempDir();
  const env = { DATA_DIR: dir, ANONYMOUS_ROLE: 'none' };
  await (await spawnService(env)).stop();
  const issued = await runCli(['token', 'create', '--name', 'ansible', '--role', 'writer'], env);
  const token = issued.stdout.trim().split('\n').pop()!;
  const service = await spawnService(env);
  try {
    const first = playbook(service.url, token, dir);
    assert.is(first.code, 0, first.out);
    assert.match(first.out, '3 inserted, 0 updated, 0 unchanged, 0 failed');
    assert.match(first.out, /localhost\s*: ok=3\s+changed=1\s/);
    assert.not.match(first.out, 'Paris-Monitor-1', 'no_log keeps the passwords out');
    const auth = { Authorization: `Bearer ${token}` };
    const position = async () =>
      (await send(service.url, 'GET', '/fr/api/changes?order=desc&limit=1', { headers: auth })).body.items[0].position;
    const after = await position();

    const second = playbook(service.url, token, dir);
    assert.is(second.code, 0, second.out);
    assert.match(second.out, '0 inserted, 0 updated, 3 unchanged, 0 failed');
    assert.match(second.out, /localhost\s*: ok=3\s+changed=0\s/);
    assert.is(await position(), after, 'the second run recorded nothing');

    const servers = (await send(service.url, 'GET', `${BASE}/servers`, { headers: auth })).body.items;
    assert.equal(
      servers.map((s: { name: string; port: number }) => [s.name, s.port]),
      [
        ['10.0.0.21', 3306],
        ['10.0.0.22', 3306],
        ['10.0.1.21-3307', 3307],
      ],
    );
  } finally {
    await service.stop();
  }
});

it.run();
