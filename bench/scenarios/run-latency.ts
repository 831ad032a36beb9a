// Scenario: one run at a time against a real `all` process and an instant model (8 tokens,
// no delay), after WARM_LOOP_CLIENTS closed loops have run the path hot (warmUp: 1,000 runs,
// 15 s at most; `warmup_runs` says how many it made). Per sample, on a fresh thread (so every
// run has the same one-message history):
// t0 = just before POST /threads/{id}/inbox; then the POST's 201, the first `item.started`, the
// first `item.delta` and the run's `run.status` completed, each timestamped when the harness
// receives it from the thread stream (thread-stream.ts: SSE when the service serves it, else
// the service's Redis stream — `stream_source` says which). The thread's stream is opened
// before t0 and the POST waits for its `stream.live`; `subscribe_to_live` is that wait, from
// the GET to `stream.live` (what a UI waits for when it opens a thread).
// `run-latency-32` measures the same stages with 32 concurrent clients in closed loops.
import { startModelServer } from '../model-server.js';
import { summarizeLatency, type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { prepareServiceEnv, startServiceProcess } from '../service-harness.js';
import { createThreads, postMessage, seedWorkspace, type SeededWorkspace } from '../service-seed.js';
import { watchThread, type StreamSource, type ThreadWatch } from '../thread-stream.js';

const TOKENS = 8;
const WARMUP_RUNS = 5;
const MAX_SAMPLES = 2_000;
const THREAD_BATCH = 50;
const EVENT_TIMEOUT_MS = 15_000;

export interface Sample {
  readonly post: number;
  readonly started: number;
  readonly delta: number;
  readonly completed: number;
}

/** One run on an idle thread: the stages this scenario measures, timestamped as the thread stream delivers them. */
export async function oneRun(ctx: BenchContext, seed: SeededWorkspace, kv: { url: string; prefix: string }, threadId: string): Promise<Sample & { source: StreamSource; liveMs: number | null }> {
  const watch = await watchThread(ctx, seed, kv, threadId);
  try {
    const t0 = performance.now();
    const { runId } = await postMessage(seed, threadId, 'Say something short.');
    const posted = performance.now();
    if (!runId) throw new Error('the inbox answered without a run on an idle thread');
    const ofRun = (type: string) => (e: { type: string; run_id?: string }) => e.type === type && e.run_id === runId;
    const started = await watch.next(ofRun('item.started'), EVENT_TIMEOUT_MS);
    const delta = await watch.next(ofRun('item.delta'), EVENT_TIMEOUT_MS);
    const done = await watch.next((e) => e.type === 'run.status' && e.run_id === runId && e.status !== 'accepted' && e.status !== 'running', EVENT_TIMEOUT_MS);
    if (done.status !== 'completed') throw new Error(`run ${runId} ended ${done.status}`);
    return { post: posted - t0, started: started.at - t0, delta: delta.at - t0, completed: done.at - t0, source: watch.source, liveMs: watch.liveMs };
  } finally {
    watch.close();
  }
}

/** An `all` process on a scratch database with an instant model (TOKENS tokens, no delay) and a seeded workspace. */
export async function startInstantService(ctx: BenchContext, extraEnv: Record<string, string> = {}) {
  const model = await startModelServer({ tokens_per_response: TOKENS, token_delay_ms: 0 });
  ctx.onCleanup(() => model.close());
  const env = await prepareServiceEnv(ctx);
  const service = await startServiceProcess(ctx, env, 'all', {
    SVC_DATABASE__POOL_SIZE: String(ctx.poolSize),
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]),
    ...extraEnv,
  });
  const seed = await seedWorkspace(ctx, env, service.url, model.url);
  return { env, seed, kv: { url: env.redisUrl, prefix: env.kvPrefix } };
}

/** p50, p99 and max of each stage, named `<stage>_p50_ms` and so on. */
function stageFigures(samples: readonly Sample[]): Figures {
  const summary = (pick: (s: Sample) => number, prefix: string): Figures => {
    const s = summarizeLatency(samples.map(pick));
    return { [`${prefix}_p50_ms`]: s.p50_ms, [`${prefix}_p99_ms`]: s.p99_ms, [`${prefix}_max_ms`]: s.max_ms };
  };
  return {
    ...summary((s) => s.post, 'post_201'),
    ...summary((s) => s.started, 'post_to_first_item_started'),
    ...summary((s) => s.delta, 'post_to_first_delta'),
    ...summary((s) => s.completed, 'post_to_completed'),
  };
}

/**
 * Runs the service's run path hot before the lone window: WARM_LOOP_CLIENTS closed loops (as
 * run-latency-32's clients), on threads of their own, until WARM_LOOP_RUNS runs have completed
 * (WARM_LOOP_MAX_SECONDS at most). A fresh process's first runs are V8 compiling that path: one
 * run at a time (~70 runs/s) took ~9 s — ~600 runs — to reach its steady p50 (7.5 ms in the
 * first 3 s, 6.6, 5.7, then 4.8–5.5; bench/RESULTS.md session 23). A warm service is what the
 * figure describes, and the other run scenarios already measure after a warm-up. Returns the
 * runs it made.
 */
async function warmUp(ctx: BenchContext, seed: SeededWorkspace, kv: { url: string; prefix: string }): Promise<number> {
  const threads = await createThreads(seed, WARM_LOOP_CLIENTS);
  const watches = await Promise.all(threads.map((id) => watchThread(ctx, seed, kv, id)));
  const done: Sample[] = [];
  const until = performance.now() + WARM_LOOP_MAX_SECONDS * 1000;
  const goOn = (): boolean => done.length < WARM_LOOP_RUNS && performance.now() < until;
  try {
    await Promise.all(threads.map((id, i) => client(ctx, seed, watches[i]!, id, () => -Infinity, goOn, done)));
  } finally {
    for (const w of watches) w.close();
  }
  return done.length;
}

async function run(ctx: BenchContext): Promise<Figures> {
  const { seed, kv } = await startInstantService(ctx);
  const warmupRuns = await warmUp(ctx, seed, kv);
  const samples: Sample[] = [];
  const lives: number[] = [];
  let source: StreamSource = 'redis-xread';
  let threads: string[] = [];
  // The window of --seconds starts after the warm-up runs and always holds one sample at least
  // (a slow warm-up on a loaded machine once left it empty).
  let deadline = Infinity;
  for (let i = 0; i < WARMUP_RUNS + MAX_SAMPLES && !ctx.signal.aborted; i++) {
    if (i === WARMUP_RUNS) deadline = performance.now() + ctx.seconds * 1000;
    else if (i > WARMUP_RUNS && performance.now() > deadline) break;
    // Threads are created in batches between samples, never inside a timed interval.
    if (threads.length === 0) threads = await createThreads(seed, THREAD_BATCH);
    const sample = await oneRun(ctx, seed, kv, threads.pop() ?? '');
    source = sample.source;
    if (i >= WARMUP_RUNS) samples.push(sample);
    if (i >= WARMUP_RUNS && sample.liveMs !== null) lives.push(sample.liveMs);
  }
  const live = lives.length > 0 ? summarizeLatency(lives) : null;
  const liveFigures: Figures = live ? { subscribe_to_live_p50_ms: live.p50_ms, subscribe_to_live_p99_ms: live.p99_ms } : {};
  return { warmup_runs: warmupRuns, runs: samples.length, stream_source: source, model_tokens: TOKENS, ...stageFigures(samples), ...liveFigures };
}

export const runLatency: Scenario = {
  name: 'run-latency',
  kind: 'scenario',
  budgetSeconds: (s) => 2 * s + 60 + WARM_LOOP_MAX_SECONDS,
  run,
  // Targets (first delta p50 ≤ 5 ms, p99 ≤ 15 ms): bench/targets.ts.
};

const CLIENTS = 32;
// Unmeasured seconds of closed loops before a window (the 32 clients' own, and run-latency's
// WARM_LOOP_CLIENTS before its lone runs): the service's JIT and pools warm up (as run-throughput's
// warm-up; BENCH_RUN_WARMUP_SECONDS overrides them all).
const CONCURRENT_WARMUP_SECONDS = Number(process.env.BENCH_RUN_WARMUP_SECONDS ?? 3);
/** run-latency's warm-up: clients (the `all` process's default worker.slots), runs, and its longest. */
const WARM_LOOP_CLIENTS = 8;
const WARM_LOOP_RUNS = 1_000;
const WARM_LOOP_MAX_SECONDS = Number(process.env.BENCH_RUN_WARMUP_SECONDS ?? 15);

/**
 * One of the 32 clients: its own thread, watched from before its first post; posts, waits for
 * the run's end, posts again (a closed loop) until `until`. Samples started in the window count.
 */
async function client(ctx: BenchContext, seed: SeededWorkspace, watch: ThreadWatch, threadId: string, from: () => number, goOn: () => boolean, out: Sample[], onRun?: () => void): Promise<void> {
  for (let seq = 0; goOn() && !ctx.signal.aborted; seq++) {
    const t0 = performance.now();
    const { runId } = await postMessage(seed, threadId, `Say something short (${seq}).`);
    const posted = performance.now();
    if (!runId) throw new Error(`thread ${threadId} was not idle`);
    const ofRun = (type: string) => (e: { type: string; run_id?: string }) => e.type === type && e.run_id === runId;
    const started = await watch.next(ofRun('item.started'), EVENT_TIMEOUT_MS);
    const delta = await watch.next(ofRun('item.delta'), EVENT_TIMEOUT_MS);
    const done = await watch.next((e) => e.type === 'run.status' && e.run_id === runId && e.status !== 'accepted' && e.status !== 'running', EVENT_TIMEOUT_MS);
    if (done.status !== 'completed') throw new Error(`run ${runId} ended ${done.status}`);
    watch.forgetThrough(done);
    if (t0 >= from()) out.push({ post: posted - t0, started: started.at - t0, delta: delta.at - t0, completed: done.at - t0 });
    onRun?.();
  }
}

/**
 * The same stages under 32 concurrent clients (the "each sending its next input when
 * its run completes"), one `all` process with worker.slots = 32 so every client's run starts
 * at once (the figure is latency under load, not queueing behind busy slots).
 */
async function runConcurrent(ctx: BenchContext): Promise<Figures> {
  const { seed, kv } = await startInstantService(ctx, { SVC_WORKER__SLOTS: String(CLIENTS) });
  const threads = await createThreads(seed, CLIENTS);
  const watches = await Promise.all(threads.map((id) => watchThread(ctx, seed, kv, id)));
  // The window opens once the loops have warmed the service: CONCURRENT_WARMUP_SECONDS and
  // WARM_LOOP_RUNS runs (as run-latency's warm-up), or WARM_LOOP_MAX_SECONDS, whichever first.
  const began = performance.now();
  const window = { from: Infinity, until: Infinity };
  let warmupRuns = 0;
  const onRun = (): void => {
    if (window.from !== Infinity) return;
    warmupRuns++;
    const now = performance.now();
    const warm = (warmupRuns >= WARM_LOOP_RUNS && now - began >= CONCURRENT_WARMUP_SECONDS * 1000) || now - began >= WARM_LOOP_MAX_SECONDS * 1000;
    if (warm) Object.assign(window, { from: now, until: now + ctx.seconds * 1000 });
  };
  const samples: Sample[] = [];
  await Promise.all(threads.map((id, i) => client(ctx, seed, watches[i]!, id, () => window.from, () => performance.now() < window.until, samples, onRun)));
  for (const w of watches) w.close();
  return {
    clients: CLIENTS,
    worker_slots: CLIENTS,
    warmup_runs: warmupRuns,
    runs: samples.length,
    runs_per_sec: Math.round((samples.length / ctx.seconds) * 10) / 10,
    stream_source: watches[0]?.source ?? 'none',
    model_tokens: TOKENS,
    ...stageFigures(samples),
  };
}

export const runLatency32: Scenario = {
  name: 'run-latency-32',
  kind: 'scenario',
  budgetSeconds: (s) => 2 * s + 60 + WARM_LOOP_MAX_SECONDS,
  run: runConcurrent,
  // Target (first delta p50 ≤ 25 ms): bench/targets.ts.
};
