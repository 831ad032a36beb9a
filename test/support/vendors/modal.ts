// A local Modal API: a gRPC server (HTTP/2, plain) serving modal.client.ModalClient with Modal's
// own protobuf messages (the definitions vendored in runtime/providers/environment/modal, which
// keep Modal's names and field numbers). Every call must carry x-modal-token-id and
// x-modal-token-secret metadata (else UNAUTHENTICATED, as Modal answers); apps, images and
// sandboxes live in memory, each sandbox a FakeSandbox whose files the ContainerFilesystemExec
// calls read and write and whose commands the shared scripted interpreter runs (sandbox-model.ts).
// A command that hangs is killed when its ContainerExec timeout_secs run out, as Modal does.
// Calls are recorded (method, metadata, decoded request); `failNext` queues a gRPC error for the
// next call of a method, `stallNext` makes it never answer (for deadlines).
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { decodeMessage, encodeMessage, modalMethods } from '../../../runtime/index.js';
import { FakeSandbox, runArgv, type CommandAnswer, type CommandHandler } from './sandbox-model.js';

export const MODAL_TOKEN_ID = 'ak-test-0123';
export const MODAL_TOKEN_SECRET = 'as-test-secret-4567';

export interface ModalCall {
  method: string;
  path: string;
  metadata: Record<string, string>;
  request: Record<string, any>; // any: decoded protobuf at the I/O edge
}

export interface ModalExec {
  id: string;
  sandbox: ModalSandbox;
  command: string[];
  timeout_secs: number;
  answer: CommandAnswer;
  completed: boolean;
  exit_code: number | null;
  /** Set when Modal killed it at timeout_secs. */
  timed_out: boolean;
  done: Promise<void>;
}

export interface ModalSandbox {
  sandbox: FakeSandbox;
  app_id: string;
  task_id: string;
  definition: Record<string, any>; // any: decoded protobuf
  terminated: boolean;
}

export interface FakeModal {
  url: string;
  origin: string;
  calls: ModalCall[];
  apps: Map<string, { name: string; environment_name: string }>;
  sandboxes: Map<string, ModalSandbox>;
  execs: Map<string, ModalExec>;
  onCommand: CommandHandler;
  failNext(method: string, code: grpc.status, details: string): void;
  stallNext(method: string): void;
  close(): Promise<void>;
}

type Reply = { error: grpc.ServiceError } | { value: Record<string, unknown> } | { stream: Array<Record<string, unknown>> } | 'stall';

const statusError = (code: grpc.status, details: string): grpc.ServiceError => Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
/** Waits for `done` or a poll's `seconds` (Modal's long polls answer at their timeout). */
async function waitFor(done: Promise<void>, seconds: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0.05, seconds) * 1000)))]);
  clearTimeout(timer);
}
const id = (prefix: string) => `${prefix}-${randomBytes(8).toString('hex')}`;

export async function startFakeModal(): Promise<FakeModal> {
  const calls: ModalCall[] = [];
  const apps = new Map<string, { name: string; environment_name: string }>();
  const appIds = new Map<string, string>();
  const images = new Map<string, string>();
  const sandboxes = new Map<string, ModalSandbox>();
  const tasks = new Map<string, ModalSandbox>();
  const execs = new Map<string, ModalExec>();
  const files = new Map<string, { sandbox: ModalSandbox; path: string; mode: string; buffer: Buffer[] }>();
  const fsOutputs = new Map<string, Record<string, unknown>>();
  const failures: Array<{ method: string; reply: Reply }> = [];
  const fake = { calls, apps, sandboxes, execs, onCommand: (() => ({ exit: 0 })) as CommandHandler } as FakeModal;

  const exitOf = (e: ModalExec) => (e.timed_out ? 137 : (e.answer.exit ?? 0));

  const runExec = (sandbox: ModalSandbox, command: string[], timeoutSecs: number): ModalExec => {
    const answer = runArgv(sandbox.sandbox, command, fake.onCommand);
    let finish!: () => void;
    const exec: ModalExec = { id: id('ex'), sandbox, command, timeout_secs: timeoutSecs, answer, completed: false, exit_code: null, timed_out: false, done: new Promise<void>((resolve) => (finish = resolve)) };
    const complete = (timedOut: boolean) => {
      if (exec.completed) return;
      exec.completed = true;
      exec.timed_out = timedOut;
      exec.exit_code = exitOf(exec);
      finish();
    };
    if (answer.hang) {
      const timer = timeoutSecs > 0 ? setTimeout(() => complete(true), timeoutSecs * 1000) : undefined;
      if (answer.pidFile) sandbox.sandbox.kills.set(answer.pidFile, () => { clearTimeout(timer); complete(true); });
    } else complete(false);
    execs.set(exec.id, exec);
    return exec;
  };

  const fsExec = (sandbox: ModalSandbox, r: Record<string, any>): Record<string, unknown> => { // any: decoded protobuf
    const fail = (code: number, message: string) => ({ output: [], error: { error_code: code, error_message: message }, eof: true, batch_index: 1 });
    const done = (output: Buffer[] = []) => ({ output, eof: true, batch_index: 1 });
    const s = sandbox.sandbox;
    switch (r.file_exec_request_oneof) {
      case 'file_mkdir_request': {
        const failure = s.mkdirs(r.file_mkdir_request.path);
        return failure ? fail(20, failure) : done();
      }
      case 'file_open_request': {
        const { path, mode } = r.file_open_request;
        const normal = posix.normalize(path);
        if (s.dirs.has(normal)) return fail(21, `Is a directory: '${path}'`);
        if (mode.startsWith('r') && !s.files.has(normal)) return fail(2, `No such file or directory: '${path}'`);
        if (mode.startsWith('w') && !s.dirs.has(posix.dirname(normal))) return fail(2, `No such file or directory: '${path}'`);
        const fd = id('fd');
        files.set(fd, { sandbox, path: normal, mode, buffer: [] });
        return { ...done(), fd };
      }
      case 'file_read_request': {
        const file = files.get(r.file_read_request.file_descriptor);
        if (!file) return fail(22, 'bad file descriptor');
        return done([s.files.get(file.path) ?? Buffer.alloc(0)]);
      }
      case 'file_write_request': {
        const file = files.get(r.file_write_request.file_descriptor);
        if (!file || !file.mode.startsWith('w')) return fail(22, 'bad file descriptor');
        file.buffer.push(Buffer.from(r.file_write_request.data));
        return done();
      }
      case 'file_close_request': {
        const file = files.get(r.file_close_request.file_descriptor);
        if (!file) return fail(22, 'bad file descriptor');
        files.delete(r.file_close_request.file_descriptor);
        if (file.mode.startsWith('w')) {
          const failure = s.write(file.path, Buffer.concat(file.buffer));
          if (failure) return fail(2, failure);
        }
        return done();
      }
      default:
        return fail(22, `unsupported request ${String(r.file_exec_request_oneof)}`);
    }
  };

  const handle = async (method: string, r: Record<string, any>): Promise<Reply> => { // any: decoded protobuf
    const sandboxOf = (sandboxId: string) => sandboxes.get(sandboxId);
    switch (method) {
      case 'AppGetOrCreate': {
        if (!r.app_name) return { error: statusError(grpc.status.INVALID_ARGUMENT, 'App name is required') };
        const key = `${r.environment_name}/${r.app_name}`;
        let appId = appIds.get(key);
        if (!appId) {
          if (r.object_creation_type !== 1) return { error: statusError(grpc.status.NOT_FOUND, `App '${r.app_name}' not found`) };
          appId = id('ap');
          appIds.set(key, appId);
          apps.set(appId, { name: r.app_name, environment_name: r.environment_name });
        }
        return { value: { app_id: appId } };
      }
      case 'ImageGetOrCreate': {
        if (!apps.has(r.app_id)) return { error: statusError(grpc.status.NOT_FOUND, `App ${r.app_id} not found`) };
        const from = String(r.image?.dockerfile_commands?.[0] ?? '');
        const imageId = id('im');
        images.set(imageId, from);
        return { value: { image_id: imageId } }; // no result yet: the build is joined
      }
      case 'ImageJoinStreaming': {
        const from = images.get(r.image_id);
        if (!from) return { error: statusError(grpc.status.NOT_FOUND, `Image ${r.image_id} not found`) };
        const broken = from.includes('nowhere/');
        return {
          stream: [
            { entry_id: '1-0' },
            { entry_id: '2-0', result: broken ? { status: 2, exception: `Image build failed: ${from.slice(5)}: pull access denied` } : { status: 1 }, eof: true },
          ],
        };
      }
      case 'SandboxCreate': {
        if (!apps.has(r.app_id)) return { error: statusError(grpc.status.NOT_FOUND, `App ${r.app_id} not found`) };
        if (!images.has(r.definition?.image_id)) return { error: statusError(grpc.status.INVALID_ARGUMENT, 'Image not found') };
        const sandbox: ModalSandbox = { sandbox: new FakeSandbox(id('sb'), r.definition), app_id: r.app_id, task_id: id('ta'), definition: r.definition, terminated: false };
        sandboxes.set(sandbox.sandbox.id, sandbox);
        tasks.set(sandbox.task_id, sandbox);
        return { value: { sandbox_id: sandbox.sandbox.id } };
      }
      case 'SandboxGetTaskId': {
        const sandbox = sandboxOf(r.sandbox_id);
        if (!sandbox) return { error: statusError(grpc.status.NOT_FOUND, `Sandbox ${r.sandbox_id} not found`) };
        return { value: sandbox.terminated ? { task_result: { status: 3, exception: 'Sandbox terminated' } } : { task_id: sandbox.task_id } };
      }
      case 'SandboxWait': {
        const sandbox = sandboxOf(r.sandbox_id);
        if (!sandbox) return { error: statusError(grpc.status.NOT_FOUND, `Sandbox ${r.sandbox_id} not found`) };
        return { value: sandbox.terminated ? { result: { status: 3 } } : {} };
      }
      case 'SandboxTerminate': {
        const sandbox = sandboxOf(r.sandbox_id);
        if (!sandbox) return { error: statusError(grpc.status.NOT_FOUND, `Sandbox ${r.sandbox_id} not found`) };
        sandbox.terminated = true;
        sandbox.sandbox.running = false;
        return { value: { existing_result: { status: 3 } } };
      }
      case 'ContainerExec': {
        const sandbox = tasks.get(r.task_id);
        if (!sandbox || sandbox.terminated) return { error: statusError(grpc.status.NOT_FOUND, `Task ${r.task_id} not found`) };
        if (!Array.isArray(r.command) || r.command.length === 0) return { error: statusError(grpc.status.INVALID_ARGUMENT, 'command is required') };
        return { value: { exec_id: runExec(sandbox, r.command, r.timeout_secs).id } };
      }
      case 'ContainerExecGetOutput': {
        const exec = execs.get(r.exec_id);
        if (!exec) return { error: statusError(grpc.status.NOT_FOUND, `Exec ${r.exec_id} not found`) };
        if (!exec.completed) await waitFor(exec.done, r.timeout);
        if (!exec.completed) return { stream: [] }; // the poll's timeout: ask again
        const text = r.file_descriptor === 2 ? exec.answer.stderr : exec.answer.stdout;
        const items = text ? [{ file_descriptor: r.file_descriptor, message_bytes: Buffer.from(text) }] : [];
        return { stream: [{ items, batch_index: Number(r.last_batch_index) + 1, exit_code: exec.exit_code }] };
      }
      case 'ContainerExecWait': {
        const exec = execs.get(r.exec_id);
        if (!exec) return { error: statusError(grpc.status.NOT_FOUND, `Exec ${r.exec_id} not found`) };
        if (!exec.completed) await waitFor(exec.done, r.timeout);
        return { value: exec.completed ? { completed: true, exit_code: exec.exit_code } : { completed: false } };
      }
      case 'ContainerFilesystemExec': {
        const sandbox = tasks.get(r.task_id);
        if (!sandbox || sandbox.terminated) return { error: statusError(grpc.status.NOT_FOUND, `Task ${r.task_id} not found`) };
        const execId = id('fe');
        const { fd, ...output } = fsExec(sandbox, r) as Record<string, unknown> & { fd?: string };
        fsOutputs.set(execId, output);
        return { value: { exec_id: execId, ...(fd ? { file_descriptor: fd } : {}) } };
      }
      case 'ContainerFilesystemExecGetOutput': {
        const output = fsOutputs.get(r.exec_id);
        if (!output) return { error: statusError(grpc.status.NOT_FOUND, `Exec ${r.exec_id} not found`) };
        fsOutputs.delete(r.exec_id);
        return { stream: [output] };
      }
    }
    return { error: statusError(grpc.status.UNIMPLEMENTED, `${method} is not served here`) };
  };

  const server = new grpc.Server();
  const definition: Record<string, grpc.MethodDefinition<any, any>> = {}; // any: untyped gRPC definitions
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const m of modalMethods().values()) {
    definition[m.name] = {
      path: m.path,
      requestStream: false,
      responseStream: m.serverStreaming,
      requestSerialize: (value: Record<string, unknown>) => encodeMessage(m.requestType, value),
      requestDeserialize: (bytes: Buffer) => decodeMessage(m.requestType, bytes),
      responseSerialize: (value: Record<string, unknown>) => encodeMessage(m.responseType, value),
      responseDeserialize: (bytes: Buffer) => decodeMessage(m.responseType, bytes),
    };
    const answer = async (call: grpc.ServerUnaryCall<any, any> | grpc.ServerWritableStream<any, any>): Promise<Reply> => { // any: untyped gRPC handlers
      const metadata = Object.fromEntries(Object.entries(call.metadata.getMap()).map(([k, v]) => [k, String(v)]));
      calls.push({ method: m.name, path: m.path, metadata, request: call.request });
      const queued = failures.findIndex((f) => f.method === m.name);
      if (queued !== -1) return failures.splice(queued, 1)[0]!.reply;
      if (metadata['x-modal-token-id'] !== MODAL_TOKEN_ID || metadata['x-modal-token-secret'] !== MODAL_TOKEN_SECRET) {
        return { error: statusError(grpc.status.UNAUTHENTICATED, 'Token validation failed: invalid token id or secret') };
      }
      return handle(m.name, call.request);
    };
    implementation[m.name] = m.serverStreaming
      ? (call: grpc.ServerWritableStream<any, any>) => { // any: untyped gRPC handler
          void answer(call).then((reply) => {
            if (reply === 'stall') return;
            if ('error' in reply) return call.destroy(reply.error);
            for (const message of 'stream' in reply ? reply.stream : [reply.value]) call.write(message);
            call.end();
          });
        }
      : (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => { // any: untyped gRPC handler
          void answer(call).then((reply) => {
            if (reply === 'stall') return;
            if ('error' in reply) return callback(reply.error);
            callback(null, 'value' in reply ? reply.value : {});
          });
        };
  }
  server.addService(definition, implementation);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  const origin = `http://127.0.0.1:${port}`;
  return Object.assign(fake, {
    url: origin,
    origin,
    failNext: (method: string, code: grpc.status, details: string) => void failures.push({ method, reply: { error: statusError(code, details) } }),
    stallNext: (method: string) => void failures.push({ method, reply: 'stall' as const }),
    close: async () => server.forceShutdown(),
  });
}
