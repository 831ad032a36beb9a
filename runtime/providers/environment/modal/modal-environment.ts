import { posix } from 'node:path';
import { EnvironmentPathError, EnvironmentVendorError, type EnvironmentClientFactory, type EnvironmentInstance, type ExecResult } from '../environment-client.js';
import { OutputCapture } from '../output-capture.js';
import { EXEC_WRAPPER, newPidFile, TREE_KILLER } from '../process-kill.js';
import { inDirectory, listArgv, parseListing } from '../shell-listing.js';
import { openModalChannel, type ModalChannel } from './modal-grpc.js';
import { EXEC_OUTPUT_PIPE, FileDescriptorNumber, GenericStatus } from './modal-proto.js';

// The `modal` environment type over Modal's gRPC API (service modal.client.ModalClient; token
// pair as x-modal-token-id / x-modal-token-secret metadata).
//
// Why a client of our own on @grpc/grpc-js and protobufjs rather than Modal's JS SDK (npm
// `modal`): the SDK reads ~/.modal.toml (or MODAL_CONFIG_PATH) when it is imported and lets
// MODAL_* variables override what it is given, so an operator's own Modal profile would leak
// into every workspace's provider; and its sandbox exec and file calls go to a per-sandbox
// "command router" reached through a short-lived JWT rather than the ModalClient service, which
// no local test server could stand in for without re-implementing that second protocol. The
// calls below are the documented ModalClient methods, with the message subset vendored in
// modal-proto.ts (Modal's names and field numbers).
//
// create: AppGetOrCreate (the provider's app_name, created if missing) → ImageGetOrCreate for
// `FROM <image>` (followed by ImageJoinStreaming until the build has a result) → SandboxCreate
// (entrypoint sleeps; resources, timeout, env, network) → SandboxGetTaskId (wait_until_ready)
// → mkdir of the working directory. Commands: ContainerExec (sh -c under the pid-file wrapper,
// timeout_secs so Modal kills it at the timeout) → ContainerExecGetOutput (stdout and stderr
// streams, raw bytes) → ContainerExecWait; at the timeout the wrapper's process tree is killed
// too. Files: ContainerFilesystemExec open/read/write/close/mkdir, each answered through
// ContainerFilesystemExecGetOutput. destroy: SandboxTerminate. Modal sandboxes cannot be
// stopped and resumed, and their lifetime (timeout_secs, at most 24 h) is fixed at creation:
// Modal has no call that extends it, so this type has no renew and expires_at is the end of
// that lifetime.

const DEFAULT_APP = 'svc-service';
export const MODAL_WORKDIR = '/workspace';
const DEFAULT_TIMEOUT_SECONDS = 3600;
const POLL_SECONDS = 50;
const KILL_GRACE_MS = 15_000;
const INTERNAL_MS = 60_000;

interface ModalState {
  task_id: string;
  app_id: string;
}

const timeoutOf = (config: Record<string, unknown>): number => (typeof config['timeout_seconds'] === 'number' ? config['timeout_seconds'] : DEFAULT_TIMEOUT_SECONDS);

/** "A10G" or "A100:2" as Modal's GPUConfig. */
function gpuConfig(gpu: unknown): Record<string, unknown> | undefined {
  if (typeof gpu !== 'string') return undefined;
  const [type, count] = gpu.split(':');
  return { gpu_type: type!.toUpperCase(), count: count ? Number(count) : 1 };
}

function resultProblem(result: Record<string, any> | null | undefined, doing: string): EnvironmentVendorError | null { // any: decoded protobuf
  if (!result || result.status === GenericStatus.SUCCESS) return null;
  const reason = result.exception || `status ${result.status}`;
  return new EnvironmentVendorError(result.status === GenericStatus.TIMEOUT ? 'timeout' : 'refused', `${doing}: ${reason}`);
}

export const modalEnvironmentClient: EnvironmentClientFactory = (provider, settings) => {
  let channel: ModalChannel | undefined;
  const api = (): ModalChannel => (channel ??= openModalChannel(provider, settings));
  const stateOf = (instance: EnvironmentInstance): ModalState & { sandbox_id: string } => {
    const taskId = instance.vendor_state['task_id'];
    if (!instance.vendor_id || typeof taskId !== 'string') throw new EnvironmentVendorError('not_found', 'the sandbox was never created');
    return { sandbox_id: instance.vendor_id, task_id: taskId, app_id: String(instance.vendor_state['app_id'] ?? '') };
  };

  /** One ContainerFilesystemExec and its answer: the output bytes, or the file error it reports. */
  async function fsExec(taskId: string, request: Record<string, unknown>, signal: AbortSignal, doing: string): Promise<{ output: Buffer; fd?: string }> {
    const started = await api().unary('ContainerFilesystemExec', { ...request, task_id: taskId }, signal, doing);
    const chunks: Buffer[] = [];
    let error: { error_code: number; error_message: string } | null = null;
    let eof = false;
    while (!eof) {
      await api().stream('ContainerFilesystemExecGetOutput', { exec_id: started.exec_id, timeout: POLL_SECONDS }, signal, doing, (batch) => {
        for (const piece of batch.output ?? []) chunks.push(Buffer.from(piece));
        if (batch.error && (batch.error.error_code || batch.error.error_message)) error = batch.error;
        if (batch.eof) eof = true;
        return eof;
      }, (POLL_SECONDS + 10) * 1000);
      if (error) break;
    }
    if (error) {
      const e = error as { error_code: number; error_message: string };
      throw new EnvironmentPathError(`${doing}: ${e.error_message || `error ${e.error_code}`}`);
    }
    return { output: Buffer.concat(chunks), ...(typeof started.file_descriptor === 'string' && started.file_descriptor ? { fd: started.file_descriptor } : {}) };
  }

  /**
   * Runs a command to completion or its timeout; both streams captured. A command of the model
   * (`line`) runs under the pid-file wrapper so its process tree can be killed; the service's own
   * commands (`argv`) run as they are.
   */
  async function execute(taskId: string, command: { line: string } | { argv: string[] }, timeoutMs: number, outputLimit: number, signal: AbortSignal): Promise<ExecResult> {
    const pidFile = 'line' in command ? newPidFile() : null;
    const timeoutSecs = Math.max(1, Math.ceil(timeoutMs / 1000));
    const started = Date.now();
    const exec = await api().unary('ContainerExec', {
      task_id: taskId,
      command: pidFile !== null && 'line' in command ? ['/bin/sh', '-c', EXEC_WRAPPER, 'svc-exec', pidFile, command.line] : (command as { argv: string[] }).argv,
      timeout_secs: timeoutSecs,
      stdout_output: EXEC_OUTPUT_PIPE,
      stderr_output: EXEC_OUTPUT_PIPE,
    }, signal, 'starting the command');
    const execId = String(exec.exec_id);
    // The command's own deadline plus a grace for Modal to kill it and close the streams.
    const bound = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs + KILL_GRACE_MS)]);
    const read = async (fd: number, capture: OutputCapture): Promise<void> => {
      let last = 0;
      let ended = false;
      while (!ended && !bound.aborted) {
        await api().stream('ContainerExecGetOutput', { exec_id: execId, timeout: POLL_SECONDS, last_batch_index: last, file_descriptor: fd, get_raw_bytes: true }, bound, 'reading the command output', (batch) => {
          for (const item of batch.items ?? []) capture.push(Buffer.from(item.message_bytes?.length ? item.message_bytes : Buffer.from(item.message ?? '')));
          last = Number(batch.batch_index ?? last);
          if (batch.exit_code !== undefined && batch.exit_code !== null) ended = true;
          return ended;
        }, (POLL_SECONDS + 10) * 1000);
      }
    };
    const stdout = new OutputCapture(outputLimit);
    const stderr = new OutputCapture(outputLimit);
    let exitCode: number | null = null;
    let completed = false;
    try {
      await Promise.all([read(FileDescriptorNumber.STDOUT, stdout), read(FileDescriptorNumber.STDERR, stderr)]);
      while (!completed && !bound.aborted) {
        const waited = await api().unary('ContainerExecWait', { exec_id: execId, timeout: Math.min(POLL_SECONDS, timeoutSecs + 5) }, bound, 'waiting for the command', (POLL_SECONDS + 10) * 1000);
        completed = waited.completed === true;
        exitCode = typeof waited.exit_code === 'number' ? waited.exit_code : null;
      }
    } catch (error) {
      if (!(error instanceof EnvironmentVendorError && error.failure === 'timeout' && bound.aborted && !signal.aborted)) throw error;
    }
    // Not completed by the deadline, or ended by Modal at timeout_secs (no clean exit by then).
    const timedOut = !completed || (Date.now() - started >= timeoutSecs * 1000 && exitCode !== 0);
    if (pidFile !== null && (timedOut || signal.aborted)) {
      // Modal ends the exec at timeout_secs; what the command started in the background goes too.
      await api().unary('ContainerExec', { task_id: taskId, command: ['/bin/sh', '-c', TREE_KILLER, 'svc-kill', pidFile], timeout_secs: 30 }, AbortSignal.timeout(30_000), 'killing the command').catch(() => undefined);
    }
    return {
      exit_code: timedOut ? null : exitCode,
      stdout: stdout.result(),
      stderr: stderr.result(),
      timed_out: timedOut && !signal.aborted,
    };
  }

  const mkdirs = (taskId: string, dir: string, signal: AbortSignal) => fsExec(taskId, { file_mkdir_request: { path: dir, make_parents: true } }, signal, `creating ${dir}`);

  return {
    unavailableReason: async () => null,
    defaultWorkingDirectory: () => MODAL_WORKDIR,
    async create(instance, signal) {
      const config = instance.config;
      const appName = typeof provider.config['app_name'] === 'string' ? provider.config['app_name'] : DEFAULT_APP;
      const environmentName = typeof provider.config['environment_name'] === 'string' ? provider.config['environment_name'] : '';
      const app = await api().unary('AppGetOrCreate', { app_name: appName, environment_name: environmentName, object_creation_type: 1 }, signal, `looking up the Modal app ${appName}`);
      const appId = String(app.app_id);
      const image = await api().unary('ImageGetOrCreate', { image: { dockerfile_commands: [`FROM ${String(config['image'])}`] }, app_id: appId }, signal, 'building the image');
      let imageResult = image.result as Record<string, any> | null; // any: decoded protobuf
      let lastEntry = '';
      while (!imageResult || imageResult.status === GenericStatus.UNSPECIFIED) {
        await api().stream('ImageJoinStreaming', { image_id: image.image_id, timeout: POLL_SECONDS, last_entry_id: lastEntry }, signal, 'waiting for the image build', (message) => {
          if (message.entry_id) lastEntry = message.entry_id;
          if (message.result && message.result.status !== GenericStatus.UNSPECIFIED) imageResult = message.result;
          return Boolean(imageResult && imageResult.status !== GenericStatus.UNSPECIFIED);
        }, (POLL_SECONDS + 10) * 1000);
      }
      const imageProblem = resultProblem(imageResult, `building the image ${String(config['image'])} failed`);
      if (imageProblem) throw imageProblem;
      const timeout = timeoutOf(config);
      const resources: Record<string, unknown> = {};
      if (typeof config['cpu'] === 'number') resources['milli_cpu'] = Math.round(config['cpu'] * 1000);
      if (typeof config['memory_mb'] === 'number') resources['memory_mb'] = config['memory_mb'];
      const gpu = gpuConfig(config['gpu']);
      if (gpu) resources['gpu_config'] = gpu;
      const network = config['network'] as { enabled?: boolean } | undefined;
      const definition: Record<string, unknown> = {
        entrypoint_args: ['sleep', String(timeout + 60)],
        image_id: image.image_id,
        resources,
        timeout_secs: timeout,
        workdir: instance.working_directory,
        block_network: network?.enabled === false,
        environment_variables: { contents: (config['env'] as Record<string, string> | undefined) ?? {} },
        ...(typeof config['idle_timeout_seconds'] === 'number' ? { idle_timeout_secs: config['idle_timeout_seconds'] } : {}),
      };
      const created = await api().unary('SandboxCreate', { app_id: appId, definition }, signal, 'creating the sandbox');
      const sandboxId = String(created.sandbox_id);
      let taskId = '';
      while (!taskId) {
        const task = await api().unary('SandboxGetTaskId', { sandbox_id: sandboxId, timeout: POLL_SECONDS, wait_until_ready: true }, signal, 'waiting for the sandbox', (POLL_SECONDS + 10) * 1000);
        const ended = resultProblem(task.task_result, 'the sandbox ended before it was ready');
        if (ended || task.task_result?.status === GenericStatus.SUCCESS) throw ended ?? new EnvironmentVendorError('refused', 'the sandbox ended before it was ready');
        taskId = typeof task.task_id === 'string' ? task.task_id : '';
      }
      try {
        await mkdirs(taskId, instance.working_directory, signal);
      } catch (error) {
        throw error instanceof EnvironmentPathError ? new EnvironmentVendorError('refused', error.message) : error;
      }
      return { vendor_id: sandboxId, vendor_state: { task_id: taskId, app_id: appId }, working_directory: instance.working_directory, expires_at: new Date(Date.now() + timeout * 1000) };
    },
    async start(instance, signal) {
      // No stop, so only a live sandbox is started: check that it still runs.
      const { sandbox_id } = stateOf(instance);
      const waited = await api().unary('SandboxWait', { sandbox_id, timeout: 0 }, signal, 'reading the sandbox');
      if (waited.result && waited.result.status !== GenericStatus.UNSPECIFIED) throw new EnvironmentVendorError('not_found', `the sandbox ${sandbox_id} has ended (${waited.result.exception || `status ${waited.result.status}`})`);
      return {};
    },
    async stop() {
      throw new EnvironmentVendorError('refused', 'Modal sandboxes cannot be stopped, only terminated');
    },
    async destroy(instance, signal) {
      // Before its id was recorded, a sandbox cannot be named; it ends at its timeout.
      if (!instance.vendor_id) return;
      try {
        await api().unary('SandboxTerminate', { sandbox_id: instance.vendor_id }, signal, 'terminating the sandbox');
      } catch (error) {
        if (!(error instanceof EnvironmentVendorError && error.failure === 'not_found')) throw error;
      }
    },
    async exec(instance, request, signal) {
      return execute(stateOf(instance).task_id, { line: inDirectory(request.cwd, request.command) }, request.timeout_ms, request.output_limit, signal);
    },
    async readFile(instance, path, maxBytes, signal) {
      const { task_id } = stateOf(instance);
      const opened = await fsExec(task_id, { file_open_request: { path, mode: 'rb' } }, signal, `${path} could not be read`);
      if (!opened.fd) throw new EnvironmentVendorError('protocol', 'Modal opened the file without a file descriptor');
      try {
        const read = await fsExec(task_id, { file_read_request: { file_descriptor: opened.fd } }, signal, `${path} could not be read`);
        return { content: read.output.subarray(0, maxBytes), size: read.output.length };
      } finally {
        await fsExec(task_id, { file_close_request: { file_descriptor: opened.fd } }, signal, `closing ${path}`).catch(() => undefined);
      }
    },
    async writeFile(instance, path, content, signal) {
      const { task_id } = stateOf(instance);
      await mkdirs(task_id, posix.dirname(path), signal);
      const opened = await fsExec(task_id, { file_open_request: { path, mode: 'wb' } }, signal, `${path} could not be written`);
      if (!opened.fd) throw new EnvironmentVendorError('protocol', 'Modal opened the file without a file descriptor');
      try {
        await fsExec(task_id, { file_write_request: { file_descriptor: opened.fd, data: content } }, signal, `${path} could not be written`);
      } finally {
        await fsExec(task_id, { file_close_request: { file_descriptor: opened.fd } }, signal, `closing ${path}`).catch(() => undefined);
      }
    },
    async listFiles(instance, dir, recursive, maxEntries, signal) {
      // Modal's file ls answers names only; the listing script gives types and sizes.
      const listed = await execute(stateOf(instance).task_id, { argv: listArgv(dir, recursive, maxEntries) }, INTERNAL_MS, 4 * 1024 * 1024, signal);
      if (listed.exit_code === 3) throw new EnvironmentPathError(`${dir} is not a directory`);
      if (listed.exit_code !== 0) throw new EnvironmentVendorError('refused', `listing ${dir} failed: ${listed.stderr.text.trim()}`);
      return parseListing(listed.stdout.text);
    },
  };
};
