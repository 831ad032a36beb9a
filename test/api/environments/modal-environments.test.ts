// The modal type through the API and in runs, against a local Modal gRPC server
// (test/support/vendors/modal.ts): an environment is a Modal sandbox (app, image, sandbox,
// task), a run's shell / write_file / read_file / list_files calls are ContainerExec and
// ContainerFilesystemExec calls on its task, a command past its timeout is killed at Modal and
// reported, DELETE terminates the sandbox, and Modal's errors leave the environment failed with
// a failure code (and fail the run that needed it).
import * as grpc from '@grpc/grpc-js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelScript } from '../../../bench/model-server.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import { MODAL_TOKEN_ID, MODAL_TOKEN_SECRET, startFakeModal, type FakeModal } from '../../support/vendors/modal.js';

const test = suite('api/environments/modal-environments');
let f: RunFixture;
let vendor: FakeModal;
let providerId: string;
const scripts = new Map<string, ModelScript[]>();
const call = (id: string, name: string, args: Record<string, unknown>): ModelScript => ({ type: 'tool_calls', calls: [{ id, name, arguments: JSON.stringify(args) }] });

async function toolResults(runId: string): Promise<any[]> {
  const page = await f.client.get(`/api/v1/runs/${runId}/items?limit=500`);
  return page.body.items.filter((i: { kind: string }) => i.kind === 'tool_result').map((i: { content: unknown }) => i.content);
}

test.before(async () => {
  vendor = await startFakeModal();
  f = await startRunFixture({
    allowedHttpOrigins: [vendor.origin],
    script: (request) => {
      for (const message of [...(request.body?.messages ?? [])].reverse()) {
        const queue = [...scripts.entries()].find(([k]) => JSON.stringify(message.content).includes(k))?.[1];
        if (queue) return queue.shift();
      }
      return undefined;
    },
  });
  const provider = await f.client.post('/api/v1/environment-providers', {
    type: 'modal',
    name: 'modal',
    config: { base_url: vendor.url, app_name: 'svc-agents', environment_name: 'main' },
    credential: { token_id: MODAL_TOKEN_ID, token_secret: MODAL_TOKEN_SECRET },
  });
  assert.is(provider.status, 201, JSON.stringify(provider.body));
  providerId = provider.body.id;
});
test.after(async () => {
  await f?.stop();
  await vendor?.close();
});

test('an environment is a Modal sandbox; DELETE terminates it', async () => {
  const template = await f.client.post('/api/v1/environment-templates', { name: 'py', provider_id: providerId, config: { image: 'python:3.12', cpu: 1, memory_mb: 1024, timeout_seconds: 1800 } });
  assert.is(template.status, 201, JSON.stringify(template.body));
  const env = await f.client.post('/api/v1/environments', { template_id: template.body.id });
  assert.is(env.status, 201, JSON.stringify(env.body));
  assert.is(env.body.status, 'ready');
  assert.is(env.body.working_directory, '/workspace');
  const sandbox = vendor.sandboxes.get(env.body.vendor_id)!;
  assert.ok(sandbox, 'the vendor id is the Modal sandbox id');
  assert.equal([sandbox.definition.timeout_secs, sandbox.definition.resources.milli_cpu, sandbox.definition.resources.memory_mb], [1800, 1000, 1024]);
  assert.equal([...vendor.apps.values()].map((a) => [a.name, a.environment_name]), [['svc-agents', 'main']]);
  const deleted = await f.client.delete(`/api/v1/environments/${env.body.id}`);
  assert.is(deleted.body.status, 'deleted');
  assert.ok(sandbox.terminated);
  assert.is(vendor.calls.filter((c) => c.method === 'SandboxTerminate').at(-1)!.request.sandbox_id, env.body.vendor_id);
  const again = await f.client.delete(`/api/v1/environments/${env.body.id}`);
  assert.ok(again.status === 200 || again.status === 404, String(again.status));
});

test('a run\'s shell, write_file, read_file and list_files go to the sandbox; a command past its timeout is killed at Modal', async () => {
  const template = await f.client.post('/api/v1/environment-templates', { name: 'py-run', provider_id: providerId, config: { image: 'python:3.12' } });
  const agent = await f.client.post('/api/v1/agents', { name: 'modal-shell', config: { model: 'fast', default_environment_template_id: template.body.id, toolsets: { environment: { enabled: true } } } });
  assert.is(agent.status, 201, JSON.stringify(agent.body));
  vendor.onCommand = (command, cwd) => {
    if (command === 'python -V') return { stdout: `Python 3.12.1 (${cwd})\n`, exit: 0 };
    if (command.startsWith('sleep')) return { hang: true, stdout: 'started\n' };
    return { stderr: `${command}: not found\n`, exit: 127 };
  };
  scripts.set('modal-run', [
    call('c1', 'shell', { command: 'python -V' }),
    call('c2', 'write_file', { path: 'notes/a.txt', content: 'from the model' }),
    call('c3', 'read_file', { path: 'notes/a.txt' }),
    call('c4', 'list_files', { path: '.', recursive: true }),
    call('c5', 'shell', { command: 'sleep 600', timeout_seconds: 1 }),
    { type: 'text', text: 'Done.' },
  ]);
  const posted = await send(f, 'modal-run', { agent_id: agent.body.id });
  const run = await waitForRun(f, posted.body.run.id, undefined, 60_000);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  const [shell, written, read, listed, slow] = await toolResults(run.id);
  assert.equal([shell.output.exit_code, shell.output.stdout], [0, 'Python 3.12.1 (/workspace)\n']);
  assert.is(written.output.path, '/workspace/notes/a.txt');
  assert.is(read.output.content, 'from the model');
  assert.equal(listed.output.entries.map((e: { path: string; type: string }) => [e.path, e.type]), [['/workspace/notes', 'directory'], ['/workspace/notes/a.txt', 'file']]);
  assert.equal([slow.output.timed_out, slow.output.exit_code, slow.output.stdout], [true, null, 'started\n']);
  assert.match(slow.output.message, /longer than its timeout of 1 s/);
  const env = (await f.client.get(`/api/v1/environments/${run.environment_mounts[0].environment_id}`)).body;
  const sandbox = vendor.sandboxes.get(env.vendor_id)!;
  assert.is(sandbox.sandbox.files.get('/workspace/notes/a.txt')!.toString(), 'from the model');
  const killed = [...vendor.execs.values()].find((e) => e.sandbox === sandbox && e.command[5]?.endsWith('sleep 600'))!;
  assert.equal([killed.timeout_secs, killed.timed_out], [1, true], 'Modal ended the exec at its timeout_secs');
  assert.is(sandbox.sandbox.killed.length, 1, 'and the tree killer ran');
  assert.ok(vendor.calls.filter((c) => c.request.task_id === sandbox.task_id).every((c) => c.metadata['x-modal-token-secret'] === MODAL_TOKEN_SECRET));
  const deleted = await f.client.delete(`/api/v1/environments/${env.id}`);
  assert.is(deleted.body.status, 'deleted');
  assert.ok(sandbox.terminated);
});

test('a sandbox past its lifetime (Modal ends it at timeout_secs; no renewal exists) is replaced at the thread\'s next run', async () => {
  const template = await f.client.post('/api/v1/environment-templates', { name: 'py-expiring', provider_id: providerId, config: { image: 'python:3.12', timeout_seconds: 600 } });
  const agent = await f.client.post('/api/v1/agents', { name: 'modal-expiring', config: { model: 'fast', default_environment_template_id: template.body.id, toolsets: { environment: { enabled: true } } } });
  vendor.onCommand = () => ({ stdout: 'ok\n', exit: 0 });
  const threadId = (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id;
  scripts.set('modal-life-1', [call('c1', 'shell', { command: 'true' }), { type: 'text', text: 'one' }]);
  const first = await waitForRun(f, (await send(f, 'modal-life-1', { agent_id: agent.body.id }, threadId)).body.run.id);
  assert.is(first.status, 'completed', JSON.stringify(first.failure));
  const old = (await f.client.get(`/api/v1/environments/${first.environment_mounts[0].environment_id}`)).body;
  assert.ok(old.expires_at && Math.abs(Date.parse(old.expires_at) - (Date.now() + 600_000)) < 30_000, 'expires_at is the end of timeout_seconds');
  await query(f.db.url, `update environments set expires_at = now() - interval '1 second' where id = $1`, [old.id]);
  scripts.set('modal-life-2', [call('c2', 'shell', { command: 'true' }), { type: 'text', text: 'two' }]);
  const second = await waitForRun(f, (await send(f, 'modal-life-2', { agent_id: agent.body.id }, threadId)).body.run.id);
  assert.is(second.status, 'completed', JSON.stringify(second.failure));
  assert.is.not(second.environment_mounts[0].environment_id, old.id);
  assert.is((await f.client.get(`/api/v1/environments/${old.id}`)).body.status, 'deleted');
  assert.ok(vendor.sandboxes.get(old.vendor_id)!.terminated, 'the expired sandbox is terminated at Modal');
});

test('a sandbox Modal no longer knows (NOT_FOUND): the shell call is a tool error the model sees, and the run goes on', async () => {
  const template = await f.client.post('/api/v1/environment-templates', { name: 'py-gone', provider_id: providerId, config: { image: 'python:3.12' } });
  const agent = await f.client.post('/api/v1/agents', { name: 'modal-gone', config: { model: 'fast', default_environment_template_id: template.body.id, toolsets: { environment: { enabled: true } } } });
  vendor.onCommand = () => ({ stdout: 'ok\n', exit: 0 });
  const env = await f.client.post('/api/v1/environments', { template_id: template.body.id });
  assert.is(env.body.status, 'ready');
  let terminated = false;
  // Modal ends the sandbox behind our back right after the run's environment is mounted.
  vendor.onCommand = (_command, _cwd, sandbox) => {
    if (!terminated) {
      terminated = true;
      for (const s of vendor.sandboxes.values()) if (s.sandbox === sandbox) s.terminated = true;
      return { stdout: 'first\n', exit: 0 };
    }
    return { exit: 0 };
  };
  scripts.set('modal-gone', [call('c1', 'shell', { command: 'echo first' }), call('c2', 'shell', { command: 'echo second' }), { type: 'text', text: 'The sandbox is gone.' }]);
  const run = await waitForRun(f, (await send(f, 'modal-gone', { agent_id: agent.body.id })).body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  const [first, second] = await toolResults(run.id);
  assert.is(first.output.stdout, 'first\n');
  assert.is(second.tool_name, 'shell');
  assert.match(second.error, /^could not use the environment: starting the command: Modal answered NOT_FOUND to ContainerExec: Task \S+ not found$/);
});

test('Modal errors: a failed image build or a wrong token leave the environment failed with a code; a run needing it fails with environment_unavailable', async () => {
  const broken = await f.client.post('/api/v1/environment-templates', { name: 'broken', provider_id: providerId, config: { image: 'nowhere/image:1' } });
  const env = await f.client.post('/api/v1/environments', { template_id: broken.body.id });
  assert.is(env.status, 201);
  assert.is(env.body.status, 'failed');
  assert.is(env.body.failure.code, 'environment_refused');
  assert.match(env.body.failure.message, /pull access denied/);

  vendor.failNext('AppGetOrCreate', grpc.status.UNAUTHENTICATED, 'Token validation failed');
  const template = await f.client.post('/api/v1/environment-templates', { name: 'py-auth', provider_id: providerId, config: { image: 'python:3.12' } });
  const unauthenticated = await f.client.post('/api/v1/environments', { template_id: template.body.id });
  assert.is(unauthenticated.body.status, 'failed');
  assert.is(unauthenticated.body.failure.code, 'environment_unauthenticated');
  assert.match(unauthenticated.body.failure.message, /UNAUTHENTICATED/);

  const agent = await f.client.post('/api/v1/agents', { name: 'modal-broken', config: { model: 'fast', default_environment_template_id: broken.body.id } });
  const posted = await send(f, 'modal-never-answered', { agent_id: agent.body.id });
  const run = await waitForRun(f, posted.body.run.id);
  assert.is(run.status, 'failed');
  assert.is(run.failure.code, 'environment_unavailable');
  assert.match(run.failure.message, /pull access denied/);
});

test.run();
