// The modal environment client against a local Modal gRPC server (test/support/vendors/modal.ts),
// call by call: method paths of modal.client.ModalClient, the token metadata on every call, the
// request fields (app, image, sandbox definition, exec, filesystem calls), a command past its
// timeout killed at the vendor, files, terminate, and vendor errors (UNAUTHENTICATED, NOT_FOUND,
// UNAVAILABLE, a stalled call past its deadline, a failed image build, the endpoint policy).
import * as grpc from '@grpc/grpc-js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EnvironmentPathError, modalEnvironmentClient, type EnvironmentClient, type EnvironmentInstance } from '../../../../runtime/index.js';
import { MODAL_TOKEN_ID, MODAL_TOKEN_SECRET, startFakeModal, type FakeModal } from '../../../support/vendors/modal.js';
import { hostSettings, newInstance, rejection, signal } from './client-harness.js';

const test = suite('runtime/providers/environment/modal-environment');
let vendor: FakeModal;
let client: EnvironmentClient;
const clientFor = (secret = MODAL_TOKEN_SECRET, origins = [vendor.origin]) =>
  modalEnvironmentClient({ type: 'modal', config: { base_url: vendor.url, app_name: 'agents', environment_name: 'dev' }, credential: { token_id: MODAL_TOKEN_ID, token_secret: secret } }, hostSettings(origins));

async function created(config: Record<string, unknown> = { image: 'python:3.12' }): Promise<EnvironmentInstance> {
  const instance = newInstance(config, '/workspace');
  const made = await client.create(instance, signal());
  return { ...instance, vendor_id: made.vendor_id, vendor_state: made.vendor_state };
}

test.before(async () => {
  vendor = await startFakeModal();
  client = clientFor();
});
test.after(async () => {
  await vendor?.close();
});

test('create: app, image build, sandbox definition, task, working directory; the token pair on every call', async () => {
  const instance = newInstance({ image: 'python:3.12', cpu: 2, memory_mb: 2048, gpu: 'a100:2', timeout_seconds: 900, idle_timeout_seconds: 300, network: { enabled: false }, env: { MODE: 'x' } }, '/workspace/app');
  const before = vendor.calls.length;
  const made = await client.create(instance, signal());
  const calls = vendor.calls.slice(before);
  assert.equal(calls.map((c) => c.path), [
    '/modal.client.ModalClient/AppGetOrCreate',
    '/modal.client.ModalClient/ImageGetOrCreate',
    '/modal.client.ModalClient/ImageJoinStreaming',
    '/modal.client.ModalClient/SandboxCreate',
    '/modal.client.ModalClient/SandboxGetTaskId',
    '/modal.client.ModalClient/ContainerFilesystemExec',
    '/modal.client.ModalClient/ContainerFilesystemExecGetOutput',
  ]);
  assert.ok(calls.every((c) => c.metadata['x-modal-token-id'] === MODAL_TOKEN_ID && c.metadata['x-modal-token-secret'] === MODAL_TOKEN_SECRET), 'token metadata on every call');
  assert.equal([calls[0]!.request.app_name, calls[0]!.request.environment_name, calls[0]!.request.object_creation_type], ['agents', 'dev', 1]);
  assert.equal(calls[1]!.request.image.dockerfile_commands, ['FROM python:3.12']);
  assert.is(calls[1]!.request.app_id, calls[3]!.request.app_id);
  const definition = calls[3]!.request.definition;
  assert.equal(definition.resources, { memory_mb: 2048, milli_cpu: 2000, gpu_config: { count: 2, gpu_type: 'A100' } });
  assert.equal([definition.timeout_secs, definition.idle_timeout_secs, definition.workdir, definition.block_network], [900, 300, '/workspace/app', true]);
  assert.equal(definition.environment_variables.contents, { MODE: 'x' });
  assert.equal(definition.entrypoint_args, ['sleep', '960']);
  assert.is(calls[4]!.request.wait_until_ready, true);
  assert.equal(calls[5]!.request.file_mkdir_request, { path: '/workspace/app', make_parents: true });
  const sandbox = vendor.sandboxes.get(made.vendor_id)!;
  assert.is(made.vendor_state['task_id'], sandbox.task_id);
  assert.ok(sandbox.sandbox.dirs.has('/workspace/app'));
  assert.ok(made.expires_at && Math.abs(made.expires_at.getTime() - (Date.now() + 900_000)) < 10_000, 'expires at the end of timeout_secs');
});

test('exec: sh -c under the pid-file wrapper with timeout_secs, output from both streams, the exit code from ContainerExecWait', async () => {
  const instance = await created();
  vendor.onCommand = (command, cwd) => ({ stdout: `${command} in ${cwd}\n`, stderr: 'note\n', exit: 3 });
  const before = vendor.calls.length;
  const result = await client.exec(instance, { command: 'ls -la', cwd: '/workspace', timeout_ms: 10_000, output_limit: 1024 }, signal());
  assert.equal([result.exit_code, result.stdout.text, result.stderr.text, result.timed_out], [3, 'ls -la in /workspace\n', 'note\n', false]);
  const calls = vendor.calls.slice(before);
  const exec = calls.find((c) => c.method === 'ContainerExec')!.request;
  assert.is(exec.task_id, instance.vendor_state['task_id']);
  assert.equal(exec.command.slice(0, 4), ['/bin/sh', '-c', 'echo $$ > "$1"; exec /bin/sh -c "$2"', 'svc-exec']);
  assert.is(exec.command[5], "cd -- '/workspace' || exit 1\nls -la");
  assert.equal([exec.timeout_secs, exec.stdout_output, exec.stderr_output], [10, 2, 2]);
  const outputs = calls.filter((c) => c.method === 'ContainerExecGetOutput').map((c) => c.request.file_descriptor).sort();
  assert.equal(outputs, [1, 2]);
  assert.ok(calls.filter((c) => c.method === 'ContainerExecGetOutput').every((c) => c.request.get_raw_bytes === true));
  assert.ok(calls.some((c) => c.method === 'ContainerExecWait'));
});

test('a command past its timeout is killed at Modal (timeout_secs) and its process tree too; reported as timed out', async () => {
  const instance = await created();
  vendor.onCommand = () => ({ hang: true, stdout: 'started\n' });
  const started = Date.now();
  const result = await client.exec(instance, { command: 'sleep 600', cwd: '/workspace', timeout_ms: 1500, output_limit: 1024 }, signal());
  assert.ok(Date.now() - started < 10_000);
  assert.equal([result.timed_out, result.exit_code], [true, null]);
  const exec = [...vendor.execs.values()].find((e) => e.command[5]?.endsWith('sleep 600'))!;
  assert.equal([exec.timeout_secs, exec.timed_out], [2, true]);
  const sandbox = vendor.sandboxes.get(instance.vendor_id!)!;
  assert.equal(sandbox.sandbox.killed, [exec.command[4]], 'the tree killer ran for the command\'s pid file');
});

test('files: write (mkdir, open wb, write, close), read (open rb, read, close), list; a missing file is a path error', async () => {
  const instance = await created();
  const before = vendor.calls.length;
  await client.writeFile(instance, '/workspace/src/a.txt', Buffer.from('hello modal'), signal());
  const fsRequests = vendor.calls.slice(before).filter((c) => c.method === 'ContainerFilesystemExec').map((c) => c.request.file_exec_request_oneof);
  assert.equal(fsRequests, ['file_mkdir_request', 'file_open_request', 'file_write_request', 'file_close_request']);
  assert.is(vendor.sandboxes.get(instance.vendor_id!)!.sandbox.files.get('/workspace/src/a.txt')!.toString(), 'hello modal');
  const read = await client.readFile(instance, '/workspace/src/a.txt', 5, signal());
  assert.equal([read.content.toString(), read.size], ['hello', 11]);
  const listed = await client.listFiles(instance, '/workspace', true, 100, signal());
  assert.equal(listed.map((e) => [e.path, e.type, e.size]), [['/workspace/src', 'directory', 0], ['/workspace/src/a.txt', 'file', 11]]);
  const missing = await rejection(client.readFile(instance, '/workspace/nope.txt', 100, signal()));
  assert.instance(missing, EnvironmentPathError);
  assert.match(missing.message, /No such file or directory/);
  const notDir = await rejection(client.listFiles(instance, '/workspace/src/a.txt', false, 10, signal()));
  assert.instance(notDir, EnvironmentPathError);
});

test('destroy terminates the sandbox; later calls are not_found; destroying again is fine', async () => {
  const instance = await created();
  await client.destroy(instance, signal());
  const terminate = vendor.calls.filter((c) => c.method === 'SandboxTerminate').at(-1)!;
  assert.is(terminate.request.sandbox_id, instance.vendor_id);
  assert.ok(vendor.sandboxes.get(instance.vendor_id!)!.terminated);
  const gone = await rejection(client.exec(instance, { command: 'true', cwd: '/workspace', timeout_ms: 1000, output_limit: 10 }, signal()));
  assert.is(gone.failure, 'not_found');
  const ended = await rejection(client.start(instance, signal()));
  assert.is(ended.failure, 'not_found');
  await client.destroy({ ...instance, vendor_id: 'sb-unknown' }, signal());
  await client.destroy({ ...instance, vendor_id: null }, signal());
});

test('vendor errors: a wrong token, UNAVAILABLE, a failed image build, a stalled call past the deadline, a refused endpoint', async () => {
  const unauthenticated = await rejection(clientFor('wrong').create(newInstance({ image: 'python:3.12' }, '/workspace'), signal()));
  assert.is(unauthenticated.failure, 'unauthenticated');
  assert.match(unauthenticated.message, /UNAUTHENTICATED.*Token validation failed/);
  vendor.failNext('SandboxCreate', grpc.status.UNAVAILABLE, 'capacity exhausted');
  const unavailable = await rejection(client.create(newInstance({ image: 'python:3.12' }, '/workspace'), signal()));
  assert.is(unavailable.failure, 'unavailable');
  assert.match(unavailable.message, /creating the sandbox.*capacity exhausted/);
  const broken = await rejection(client.create(newInstance({ image: 'nowhere/image:1' }, '/workspace'), signal()));
  assert.is(broken.failure, 'refused');
  assert.match(broken.message, /pull access denied/);
  vendor.stallNext('AppGetOrCreate');
  const stalled = await rejection(client.create(newInstance({ image: 'python:3.12' }, '/workspace'), signal(800)));
  assert.is(stalled.failure, 'timeout');
  const refused = await rejection(clientFor(MODAL_TOKEN_SECRET, []).create(newInstance({ image: 'python:3.12' }, '/workspace'), signal()));
  assert.is(refused.failure, 'refused');
  assert.match(refused.message, /endpoint policy/);
  const noCredential = await rejection(modalEnvironmentClient({ type: 'modal', config: { base_url: vendor.url }, credential: null }, hostSettings([vendor.origin])).create(newInstance({ image: 'x' }, '/workspace'), signal()));
  assert.is(noCredential.failure, 'unauthenticated');
});

test.run();
