// Scenario: 10,000 WebSocket subscribers of one thread (half JSON, half MessagePack frames),
// on one `all` process, held by CLIENT_PROCESSES child processes (bench/fanout-client.ts: a
// bare RFC 6455 client, so the clients cost little next to the service). A model streams a
// time-stamped token every TOKEN_INTERVAL_MS; each subscriber's latency is the token's write
// time → the frame's receipt (model → adapter → attempt → host → XADD → the hub's XREAD → one
// uWS publish per record and format → 10,000 sockets → client), on the machine's clock.
import { fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { cpus, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { machineBusyMs, processCpuMs, threadCpuMs } from '../proc-cpu.js';
import { summarizeLatency, type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { prepareServiceEnv, startServiceProcess } from '../service-harness.js';
import { createThreads, postMessage, seedWorkspace } from '../service-seed.js';
import { startStampingModel } from './stream-fanout.js';

const SUBSCRIBERS = 10_000;
const CLIENT_PROCESSES = 4;
/** 10 tokens/s: 100,000 frames/s out of the service, what two shared cores can carry. */
const TOKEN_INTERVAL_MS = 100;
const LIVE_TIMEOUT_MS = 90_000;
const CLIENT_FILE = fileURLToPath(new URL('../fanout-client.js', import.meta.url));
/** dist/bench/scenarios → the source tree's bench/. */
const NATIVE_SOURCE = fileURLToPath(new URL('../../../bench/fanout-client.c', import.meta.url));

interface ClientReport {
  samples: number[];
  fromXadd: number[];
  deltas: number[];
}

/**
 * The clients run under SCHED_BATCH (`chrt -b 0`, util-linux) where the machine has it. They share
 * two cores with the service, and a woken client (normal policy) preempts the running service:
 * over 6 s of streaming the service's main thread was preempted 90,425 times (87 voluntary
 * switches), once or more per burst of socket writes. Batch tasks keep their fair share of CPU
 * (same weight) but do not preempt on wake-up, as clients on their own machines would not. Every
 * frame is still read and checked, and stamped when read: a client that waits for a core counts
 * that wait in the latency.
 */
interface Launcher {
  batch: boolean;
  sched: string;
}

function clientLauncher(): Launcher {
  const probe = spawnSync('chrt', ['-b', '0', process.execPath, '-e', '0'], { stdio: 'ignore' });
  if (probe.status !== 0) return { batch: false, sched: 'normal (chrt -b unavailable)' };
  return { batch: true, sched: 'batch' };
}

/** One client process, native or Node (resolved once all its subscribers are live). */
interface Client {
  readonly pid: number;
  /** Deltas received so far over all its sockets. */
  count(): Promise<number>;
  /** Its latencies and per-socket delta counts; the process exits after answering. */
  report(): Promise<ClientReport>;
  readonly exited: Promise<unknown>;
}

/**
 * The native client (fanout-client.c, built here with the machine's C compiler): one epoll loop
 * in C costs a fraction of a Node process per frame, and the clients share the two cores with
 * the service they measure. Null where no compiler builds it (the Node client is used then).
 */
function buildNativeClient(ctx: BenchContext): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'svc-fanout-'));
  ctx.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const binary = join(dir, 'fanout-client');
  const built = spawnSync('cc', ['-O2', '-o', binary, NATIVE_SOURCE], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (built.status === 0) return binary;
  ctx.log(`native client not built (${built.error?.message ?? built.stderr.trim().split('\n')[0]}); using the Node client`);
  return null;
}

function startNativeClient(ctx: BenchContext, binary: string, url: URL, apiKey: string, count: number, first: number, launcher: Launcher): Promise<Client> {
  const prefix = join(dirname(binary), `client-${first}`);
  const args = [url.hostname, url.port, url.pathname, apiKey, String(count), String(first), prefix];
  const child = launcher.batch ? spawn('chrt', ['-b', '0', binary, ...args], { stdio: ['pipe', 'pipe', 'inherit'] }) : spawn(binary, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  ctx.onCleanup(() => void child.kill('SIGKILL'));
  const exited = once(child, 'exit');
  const waiters: Array<(line: string) => boolean> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const i = waiters.findIndex((w) => w(line));
    if (i >= 0) waiters.splice(i, 1);
  });
  const expect = (prefixText: string, ms: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`client ${first}: no "${prefixText}" in ${ms} ms`)), ms);
      waiters.push((line) => {
        if (line.startsWith('error ')) {
          clearTimeout(timer);
          reject(new Error(`client ${first}: ${line.slice(6)}`));
          return true;
        }
        if (!line.startsWith(prefixText)) return false;
        clearTimeout(timer);
        resolve(line.slice(prefixText.length).trim());
        return true;
      });
    });
  const read = (suffix: string): Buffer => readFileSync(prefix + suffix);
  const doubles = (b: Buffer): number[] => Array.from(new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8));
  const client: Client = {
    pid: child.pid ?? -1,
    count: async () => {
      const answer = expect('received ', 10_000);
      child.stdin!.write('count\n');
      return Number(await answer);
    },
    report: async () => {
      const answer = expect('reported', 30_000);
      child.stdin!.write('report\n');
      await answer;
      const deltas = read('.deltas');
      return { samples: doubles(read('.samples')), fromXadd: doubles(read('.xadd')), deltas: Array.from(new Int32Array(deltas.buffer, deltas.byteOffset, deltas.byteLength / 4)) };
    },
    exited,
  };
  return Promise.race([
    expect('live ', LIVE_TIMEOUT_MS).then(() => client),
    exited.then(([code]) => Promise.reject(new Error(`client ${first} exited (${String(code)})`))),
  ]);
}

/** The Node client (fanout-client.ts) over fork IPC. */
function startNodeClient(ctx: BenchContext, url: URL, apiKey: string, count: number, first: number, launcher: Launcher): Promise<Client> {
  const child = fork(CLIENT_FILE, [url.href, apiKey, String(count), String(first)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...(launcher.batch ? { execPath: 'chrt', execArgv: ['-b', '0', process.execPath] } : {}) });
  ctx.onCleanup(() => void child.kill('SIGKILL'));
  const ask = <T>(request: object, pick: (message: Record<string, unknown>) => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const onMessage = (message: Record<string, unknown>): void => {
        const value = pick(message);
        if (value === undefined) return;
        child.off('message', onMessage);
        resolve(value);
      };
      child.on('message', onMessage);
      child.send(request);
    });
  const client: Client = {
    pid: child.pid ?? -1,
    count: () => ask({ count: true }, (m) => (typeof m.received === 'number' ? m.received : undefined)),
    report: () => ask({ report: true }, (m) => (Array.isArray(m.samples) && Array.isArray(m.deltas) ? { samples: m.samples as number[], fromXadd: (m.fromXadd as number[] | undefined) ?? [], deltas: m.deltas as number[] } : undefined)),
    exited: once(child, 'exit'),
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`client ${first}: not all ${count} subscribers live in ${LIVE_TIMEOUT_MS} ms`)), LIVE_TIMEOUT_MS);
    child.on('message', (message: { live?: number; error?: string }) => {
      if (message.error) reject(new Error(`client ${first}: ${message.error}`));
      if (message.live === count) {
        clearTimeout(timer);
        resolve(client);
      }
    });
    child.once('exit', (code) => reject(new Error(`client ${first} exited (${code})`)));
  });
}

function perDelivery(ms: number | undefined, deliveries: number): number {
  return Math.round(((ms ?? NaN) * 1000) / deliveries * 10) / 10;
}

async function run(ctx: BenchContext): Promise<Figures> {
  const model = await startStampingModel(ctx, TOKEN_INTERVAL_MS);
  const env = await prepareServiceEnv(ctx);
  const service = await startServiceProcess(ctx, env, 'all', { SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]) });
  const seed = await seedWorkspace(ctx, env, service.url, model.url);
  const [threadId] = await createThreads(seed, 1);
  const wsUrl = `${service.url.replace('http://', 'ws://')}/api/v1/threads/${threadId}/stream`;
  const opening = performance.now();
  const per = SUBSCRIBERS / CLIENT_PROCESSES;
  const launcher = clientLauncher();
  const native = process.env.BENCH_FANOUT_CLIENT === 'node' ? null : buildNativeClient(ctx);
  const target = new URL(wsUrl);
  const clients = await Promise.all(
    Array.from({ length: CLIENT_PROCESSES }, (_, i) =>
      native ? startNativeClient(ctx, native, target, seed.apiKey, per, i * per, launcher) : startNodeClient(ctx, target, seed.apiKey, per, i * per, launcher),
    ),
  );
  const openSeconds = (performance.now() - opening) / 1000;
  ctx.log(`${SUBSCRIBERS} subscribers live in ${openSeconds.toFixed(1)} s`);
  // Each message starts a ~1 s run; the thread's queue runs them one after another.
  const runs = Math.max(1, Math.round(ctx.seconds));
  // CPU over the streaming phase (/proc): the service's main thread (uWS: every socket write of
  // the fan-out), the whole service process, the client processes, the machine.
  const cpu = (): number[] => [threadCpuMs(service.pid, service.pid), processCpuMs(service.pid), clients.reduce((sum, c) => sum + processCpuMs(c.pid), 0), machineBusyMs()];
  const cpuBefore = cpu();
  const started = performance.now();
  for (let i = 0; i < runs; i++) await postMessage(seed, threadId!, `stream ${i}`);
  const deadline = started + (runs + 30) * 1000;
  while (performance.now() < deadline && !ctx.signal.aborted && model.finished() < runs) await new Promise((r) => setTimeout(r, 50));
  // The last tokens' frames may still be on their way: wait until every subscriber has every
  // delta, or a bound (a subscriber short of deltas then shows in subscribers_complete).
  const settle = performance.now() + 15_000;
  while (performance.now() < settle && !ctx.signal.aborted) {
    const received = (await Promise.all(clients.map((c) => c.count()))).reduce((a, b) => a + b, 0);
    if (received >= model.emitted() * SUBSCRIBERS) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const cpuUsed = cpu().map((v, i) => v - (cpuBefore[i] ?? NaN));
  const phaseMs = performance.now() - started;
  const reports = await Promise.all(clients.map((c) => c.report()));
  await Promise.all(clients.map((c) => c.exited));
  const all = reports.flatMap((r) => r.samples);
  const perSubscriber = reports.flatMap((r) => r.deltas);
  const emitted = model.emitted();
  const latency = summarizeLatency(all);
  const fromXadd = reports.flatMap((r) => r.fromXadd);
  const fanOutLeg = fromXadd.length > 0 ? summarizeLatency(fromXadd) : { p50_ms: 'none', p99_ms: 'none' };
  return {
    subscribers: SUBSCRIBERS,
    client_processes: CLIENT_PROCESSES,
    client_kind: native ? 'native (fanout-client.c)' : 'node (fanout-client.ts)',
    client_scheduling: launcher.sched,
    token_interval_ms: TOKEN_INTERVAL_MS,
    subscribers_open_seconds: Math.round(openSeconds * 10) / 10,
    deltas_emitted: emitted,
    deliveries: all.length,
    subscribers_complete: perSubscriber.filter((n) => n === emitted).length,
    delta_p50_ms: latency.p50_ms,
    delta_p99_ms: latency.p99_ms,
    delta_max_ms: latency.max_ms,
    xadd_to_receipt_p50_ms: fanOutLeg.p50_ms,
    xadd_to_receipt_p99_ms: fanOutLeg.p99_ms,
    // Per delivered frame (one subscriber, one delta); the phase also carries the runs' other events.
    service_main_cpu_us_per_delivery: perDelivery(cpuUsed[0], all.length),
    service_cpu_us_per_delivery: perDelivery(cpuUsed[1], all.length),
    clients_cpu_us_per_delivery: perDelivery(cpuUsed[2], all.length),
    // Share of one core the service's main thread got over the phase, and of the machine busy.
    service_main_core_share: Math.round(((cpuUsed[0] ?? NaN) / phaseMs) * 100) / 100,
    machine_busy_share: Math.round(((cpuUsed[3] ?? NaN) / (phaseMs * cpus().length)) * 100) / 100,
  };
}

export const streamFanoutWs: Scenario = {
  name: 'stream-fanout-10k',
  kind: 'scenario',
  budgetSeconds: (s) => 3 * s + 150,
  run,
  // Target (p99 ≤ 100 ms): bench/targets.ts.
};
