// Scenario: completed runs per second with N concurrent threads, each a closed loop (post a
// message, wait for its run's `run.status` completed on the thread stream, post the next), on
// a real control process (API, sweeps) and one worker process with worker.slots = 64, against
// an instant model. Completions are counted in a window after a warm-up; the database's own
// commit counter over the same window gives the commits each run costs, which is what the
// ratio to the pg-commit ceiling is made of.
import { startModelServer } from '../model-server.js';
import { commandCpuMs, machineBusyMs, processCpuMs, threadCpuMs, threadGroupsCpuMs } from '../proc-cpu.js';
import { summarizeLatency, type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { commitCount, prepareServiceEnv, startServiceProcess } from '../service-harness.js';
import { createThreads, postMessage, seedWorkspace, type SeededWorkspace } from '../service-seed.js';
import { watchThread, type ThreadWatch } from '../thread-stream.js';

const SLOTS = 64;
const THREADS = 64;
const TOKENS = 8;
/**
 * Unmeasured seconds before the window (BENCH_RUN_WARMUP_SECONDS overrides the default 5 s). A
 * fresh worker process is still compiling its hot code (V8's TurboFan jobs, on helper threads,
 * once per attempt thread) and its pools are still opening connections during its first
 * seconds; the figures are what a running service pays per run, so the window starts after
 * that (1 s until session 7: bench/RESULTS.md has the same build measured both ways).
 */
const WARMUP_SECONDS = Number(process.env.BENCH_RUN_WARMUP_SECONDS ?? 5);
const RUN_TIMEOUT_MS = 30_000;

interface Completion {
  readonly at: number;
  readonly latencyMs: number;
  readonly ok: boolean;
}

/** One thread's closed loop until `until`; every finished run is recorded with its end time. */
async function lane(ctx: BenchContext, seed: SeededWorkspace, watch: ThreadWatch, threadId: string, until: number, out: Completion[]): Promise<void> {
  for (let seq = 0; performance.now() < until && !ctx.signal.aborted; seq++) {
    const t0 = performance.now();
    const { runId } = await postMessage(seed, threadId, `message ${seq}`);
    if (!runId) throw new Error(`thread ${threadId} was not idle`);
    const done = await watch.next((e) => e.type === 'run.status' && e.run_id === runId && e.status !== 'accepted' && e.status !== 'running', RUN_TIMEOUT_MS);
    watch.forgetThrough(done);
    out.push({ at: done.at, latencyMs: done.at - t0, ok: done.status === 'completed' });
  }
}

/** CPU spent so far (ms) by each party of the run path; diffs over the window say who is busy. */
function cpuSnapshot(controlPid: number, workerPid: number): Record<string, number> {
  const harness = process.cpuUsage();
  const workerThreads = threadGroupsCpuMs(workerPid);
  return {
    control: processCpuMs(controlPid),
    worker: processCpuMs(workerPid),
    // The worker process's main thread (claims, commits, the host side of the attempt ports);
    // worker − worker_main is the attempt threads plus V8/libuv helper threads.
    worker_main: threadCpuMs(workerPid, workerPid),
    // The rest, split by thread start (proc-cpu.ts): the attempt pool's threads, and V8's and
    // libuv's helper threads (GC, compilation, file I/O) that serve every thread of the process.
    worker_attempt_threads: workerThreads.late,
    worker_helpers: workerThreads.early,
    harness: (harness.user + harness.system) / 1000,
    // Every postgres / redis process on the machine: shared with other users of this server.
    postgres: commandCpuMs('postgres'),
    redis: commandCpuMs('redis-server'),
    machine: machineBusyMs(),
  };
}

async function run(ctx: BenchContext): Promise<Figures> {
  const model = await startModelServer({ tokens_per_response: TOKENS, token_delay_ms: 0 });
  ctx.onCleanup(() => model.close());
  const env = await prepareServiceEnv(ctx);
  const common = { SVC_DATABASE__POOL_SIZE: String(ctx.poolSize), SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]) };
  const control = await startServiceProcess(ctx, env, 'control', common);
  const worker = await startServiceProcess(ctx, env, 'worker', { ...common, SVC_WORKER__SLOTS: String(SLOTS) });
  const seed = await seedWorkspace(ctx, env, control.url, model.url);
  const threads = await createThreads(seed, THREADS);
  const kv = { url: env.redisUrl, prefix: env.kvPrefix };
  const watches = await Promise.all(threads.map((id) => watchThread(ctx, seed, kv, id)));

  const started = performance.now();
  const windowStart = started + WARMUP_SECONDS * 1000;
  const windowEnd = windowStart + ctx.seconds * 1000;
  const completions: Completion[] = [];
  let commitsAtStart = NaN;
  let cpuAtStart: Record<string, number> = {};
  let cpuAtEnd: Record<string, number> = {};
  const marker = new Promise<void>((resolve) => setTimeout(resolve, windowStart - performance.now())).then(async () => {
    cpuAtStart = cpuSnapshot(control.pid, worker.pid);
    commitsAtStart = await commitCount(env.databaseUrl);
  });
  const endMarker = new Promise<void>((resolve) => setTimeout(resolve, windowEnd - performance.now())).then(() => {
    cpuAtEnd = cpuSnapshot(control.pid, worker.pid);
  });
  await Promise.all(threads.map((id, i) => lane(ctx, seed, watches[i]!, id, windowEnd, completions)));
  await Promise.all([marker, endMarker]);
  const commitsAtEnd = await commitCount(env.databaseUrl);
  for (const w of watches) w.close();

  const inWindow = completions.filter((c) => c.at >= windowStart && c.at <= windowEnd);
  const completed = inWindow.filter((c) => c.ok);
  if (completed.length === 0) throw new Error('no run completed in the measuring window');
  const latency = summarizeLatency(completed.map((c) => c.latencyMs));
  const runsPerSec = completed.length / ctx.seconds;
  const perRun = (k: string): number => ((cpuAtEnd[k] ?? NaN) - (cpuAtStart[k] ?? NaN)) / completed.length;
  const cpuPerRun = Object.fromEntries(Object.keys(cpuAtEnd).map((k) => [`cpu_ms_per_run_${k}`, Math.round(perRun(k) * 100) / 100]));
  // The "machine CPU per completed run": the service's processes, PostgreSQL and Redis
  // (the harness — clients and model server — apart). postgres/redis count every such process
  // on the machine, so other users of this server inflate it.
  const service = ['control', 'worker', 'postgres', 'redis'].reduce((sum, k) => sum + perRun(k), 0);
  return {
    runs_per_sec: Math.round(runsPerSec * 10) / 10,
    runs_completed: completed.length,
    runs_not_completed: inWindow.length - completed.length,
    run_p50_ms: latency.p50_ms,
    run_p99_ms: latency.p99_ms,
    // pg_stat_database is flushed by backends at most once a second: approximate.
    db_commits_per_run_approx: Math.round(((commitsAtEnd - commitsAtStart) / completed.length) * 10) / 10,
    threads: THREADS,
    worker_slots: SLOTS,
    topology: 'control + 1 worker process',
    stream_source: watches[0]?.source ?? 'none',
    model_tokens: TOKENS,
    warmup_seconds: WARMUP_SECONDS,
    // Where the machine's CPU went per completed run (all cores; `machine` is the total).
    ...cpuPerRun,
    cpu_ms_per_run_service: Math.round(service * 100) / 100,
  };
}

export const runThroughput: Scenario = {
  name: 'run-throughput',
  kind: 'scenario',
  budgetSeconds: (s) => s + WARMUP_SECONDS + 90,
  run,
  ratios: [{ name: 'runs_vs_pg_commit', numerator: 'run-throughput.runs_per_sec', denominator: 'pg-commit.commits_per_sec' }],
  targets: [{ name: 'runs_vs_pg_commit', figure: 'ratios.runs_vs_pg_commit', op: '>=', target: 0.3, unit: '×' }],
};
