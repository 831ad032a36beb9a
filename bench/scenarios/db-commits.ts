// Scenario: database commits per inbox POST and per run, counted exactly. The service's
// database connections go through a counting proxy (pg-transaction-counter.ts) that reads the
// wire protocol and counts every transaction as it ends, so there is no stats-flush lag.
//
// - Phase 1, a `control` process (API and sweeps, no worker: runs stay accepted): POSTs to the
//   inbox, one at a time, each on a fresh idle thread (the common path: entry + accepted run).
// - Phase 2, an `all` process: one run at a time on a fresh thread, input → completed (instant
//   model, no tools), the POST included — what a run costs the database end to end.
//
// Background work (pg-boss jobs, sweeps, the outbox sender) runs in the same processes. Its
// writing commits are recognised by their statements (the counter's BACKGROUND) and left out;
// what remains of it is measured in an idle window of the same process just before the phase
// and subtracted pro rata (idle, a poll or sweep that finds nothing is a read-only
// transaction), so `commits_per_*` are exact (`*_idle_foreground_commits` shows the residue).
// `commits_per_*` count writing commits (an xid assigned: a commit record and its fsync);
// `transactions_per_*` count every transaction, read-only ones (credential lookup) included.
import pg from 'pg';
import { startModelServer } from '../model-server.js';
import { processCpuMs } from '../proc-cpu.js';
import { startTransactionCounter, type TransactionCounter, type TransactionCounts } from '../pg-transaction-counter.js';
import { type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { prepareServiceEnv, startServiceProcess, stopProcess, type ServiceEnv } from '../service-harness.js';
import { Api, createThreads, postMessage, seedWorkspace, type SeededWorkspace } from '../service-seed.js';
import { watchThread } from '../thread-stream.js';

const POSTS = 300;
const RUNS = 100;
const IDLE_MS = 1_500;
const EVENT_TIMEOUT_MS = 15_000;

interface Window {
  counts: TransactionCounts;
  ms: number;
  /** CPU of the scenario database's own PostgreSQL backends over the window (ms). */
  backendCpuMs: number;
}

/**
 * CPU (ms) so far of each backend connected to the scenario's database, by pid. Only this
 * database's sessions count, so other work on the same server (another suite, another bench)
 * does not: a per-operation PostgreSQL figure that holds on a busy machine, unlike the
 * machine-wide postgres CPU of the throughput scenarios. A backend that starts inside a window
 * counts from zero; one that exits inside it is lost (the service's pool keeps its sessions).
 */
async function backendCpu(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const rows = (await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database])).rows;
  return new Map(rows.map((r) => [r.pid, processCpuMs(r.pid)] as const).filter(([, ms]) => Number.isFinite(ms)));
}

/** Set once the scenario knows its database: the backends whose CPU the windows measure. */
let backends: { admin: pg.Client; database: string } | null = null;

async function countWindow(counter: TransactionCounter, fn: () => Promise<void>): Promise<Window> {
  const cpuBefore = backends ? await backendCpu(backends.admin, backends.database) : new Map<number, number>();
  const before = counter.counts();
  const t0 = performance.now();
  await fn();
  const after = counter.counts();
  const cpuAfter = backends ? await backendCpu(backends.admin, backends.database) : new Map<number, number>();
  let backendCpuMs = 0;
  for (const [pid, ms] of cpuAfter) backendCpuMs += ms - (cpuBefore.get(pid) ?? 0);
  return {
    backendCpuMs,
    ms: performance.now() - t0,
    counts: {
      transactions: after.transactions - before.transactions,
      writing: after.writing - before.writing,
      writing_background: after.writing_background - before.writing_background,
      rolled_back: after.rolled_back - before.rolled_back,
      statements: after.statements - before.statements,
      round_trips: after.round_trips - before.round_trips,
    },
  };
}

type Measure = (c: TransactionCounts) => number;
const foregroundWriting: Measure = (c) => c.writing - c.writing_background;

/** Work window minus the idle window's rate over the same length, per operation. */
function perOp(work: Window, idle: Window, ops: number, measure: Measure): number {
  const background = (measure(idle.counts) / idle.ms) * work.ms;
  return Math.round(((measure(work.counts) - background) / ops) * 100) / 100;
}

/** The database's backend CPU per operation, the idle window's rate subtracted (ms, 3 decimals). */
function backendCpuPerOp(work: Window, idle: Window, ops: number): number {
  const background = (idle.backendCpuMs / idle.ms) * work.ms;
  return Math.round(((work.backendCpuMs - background) / ops) * 1000) / 1000;
}

const idleWindow = (counter: TransactionCounter): Promise<Window> => countWindow(counter, () => new Promise((r) => setTimeout(r, IDLE_MS)));

function proxiedUrl(env: ServiceEnv, port: number): string {
  const url = new URL(env.databaseUrl);
  url.host = `127.0.0.1:${port}`;
  return url.toString();
}

async function phasePosts(ctx: BenchContext, seed: SeededWorkspace, counter: TransactionCounter): Promise<Figures> {
  const threads = await createThreads(seed, POSTS + 1);
  await postMessage(seed, threads.pop() ?? '', 'warm-up');
  counter.takeLog();
  const idle = await idleWindow(counter);
  if (process.env.BENCH_DB_COMMITS_LOG) ctx.log(`idle commits: ${JSON.stringify(counter.takeLog().map((t) => t.map((x) => x.slice(0, 120))), null, 1)}`);
  const work = await countWindow(counter, async () => {
    for (let i = 0; i < POSTS && !ctx.signal.aborted; i++) await postMessage(seed, threads[i] ?? '', 'hello');
  });
  if (process.env.BENCH_DB_COMMITS_LOG) ctx.log(`post commits: ${JSON.stringify(counter.takeLog().slice(0, 4), null, 1)}`);
  return {
    posts: POSTS,
    commits_per_inbox_post: perOp(work, idle, POSTS, foregroundWriting),
    transactions_per_inbox_post: perOp(work, idle, POSTS, (c) => c.transactions),
    statements_per_inbox_post: perOp(work, idle, POSTS, (c) => c.statements),
    round_trips_per_inbox_post: perOp(work, idle, POSTS, (c) => c.round_trips),
    postgres_backend_cpu_ms_per_inbox_post: backendCpuPerOp(work, idle, POSTS),
    post_idle_foreground_commits: foregroundWriting(idle.counts),
  };
}

async function phaseRuns(ctx: BenchContext, seed: SeededWorkspace, env: ServiceEnv, counter: TransactionCounter): Promise<Figures> {
  const threads = await createThreads(seed, RUNS + 1);
  const kv = { url: env.redisUrl, prefix: env.kvPrefix };
  const watches = await Promise.all(threads.map((id) => watchThread(ctx, seed, kv, id)));
  ctx.onCleanup(() => watches.forEach((w) => w.close()));
  const oneRun = async (i: number): Promise<void> => {
    const { runId } = await postMessage(seed, threads[i] ?? '', 'Say something short.');
    if (!runId) throw new Error('the inbox answered without a run on an idle thread');
    const done = await watches[i]!.next((e) => e.type === 'run.status' && e.run_id === runId && e.status !== 'accepted' && e.status !== 'running', EVENT_TIMEOUT_MS);
    if (done.status !== 'completed') throw new Error(`run ${runId} ended ${done.status}`);
  };
  await oneRun(RUNS); // warm-up: the worker pool's threads, the model's connection
  const idle = await idleWindow(counter);
  counter.takeLog();
  const work = await countWindow(counter, async () => {
    for (let i = 0; i < RUNS && !ctx.signal.aborted; i++) await oneRun(i);
  });
  if (process.env.BENCH_DB_COMMITS_LOG) ctx.log(`run commits: ${JSON.stringify(counter.takeLog().slice(0, process.env.BENCH_DB_COMMITS_LOG === "all" ? 40 : 12), null, 1)}`);
  return {
    runs: RUNS,
    commits_per_run: perOp(work, idle, RUNS, foregroundWriting),
    transactions_per_run: perOp(work, idle, RUNS, (c) => c.transactions),
    statements_per_run: perOp(work, idle, RUNS, (c) => c.statements),
    round_trips_per_run: perOp(work, idle, RUNS, (c) => c.round_trips),
    postgres_backend_cpu_ms_per_run: backendCpuPerOp(work, idle, RUNS),
    background_commits_in_window: work.counts.writing_background,
    run_idle_foreground_commits: foregroundWriting(idle.counts),
  };
}

const DRAIN_TIMEOUT_MS = 60_000;

/** Waits until no run of the scenario's database is accepted or running (bounded). */
async function drainAcceptedRuns(ctx: BenchContext, admin: pg.Client): Promise<void> {
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const { rows } = await admin.query<{ n: number }>("select count(*)::int as n from runs where status in ('accepted', 'running')");
    if (rows[0]!.n === 0) return;
    if (ctx.signal.aborted) throw new Error('aborted while phase 1 runs drained');
    if (performance.now() > deadline) throw new Error(`phase 1's accepted runs did not drain within ${DRAIN_TIMEOUT_MS} ms (${rows[0]!.n} left)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run(ctx: BenchContext): Promise<Figures> {
  const model = await startModelServer({ tokens_per_response: 8, token_delay_ms: 0 });
  ctx.onCleanup(() => model.close());
  const env = await prepareServiceEnv(ctx);
  const target = new URL(env.databaseUrl);
  const counter = await startTransactionCounter({ host: target.hostname, port: Number(target.port || 5432) });
  ctx.onCleanup(() => counter.close());
  const overrides = {
    SVC_DATABASE__URL: proxiedUrl(env, counter.port),
    SVC_DATABASE__POOL_SIZE: String(ctx.poolSize),
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]),
  };
  const admin = new pg.Client({ connectionString: env.databaseUrl });
  await admin.connect();
  ctx.onCleanup(() => admin.end());
  backends = { admin, database: target.pathname.slice(1) };
  ctx.onCleanup(() => void (backends = null));
  const control = await startServiceProcess(ctx, env, 'control', overrides);
  const seed = await seedWorkspace(ctx, env, control.url, model.url);
  const posts = await phasePosts(ctx, seed, counter);
  await stopProcess(control.child, control.exited);
  const all = await startServiceProcess(ctx, env, 'all', overrides);
  // Phase 1's POSTs accepted runs that no process could execute (control has no worker); the
  // `all` process claims and runs them first. Phase 2 measures one run on an otherwise idle
  // service, its idle window included, so it starts once they are done.
  await drainAcceptedRuns(ctx, admin);
  const runs = await phaseRuns(ctx, { ...seed, api: new Api(all.url, seed.api.headers) }, env, counter);
  return { ...posts, ...runs, counter: 'wire-protocol proxy (exact)' };
}

export const dbCommits: Scenario = {
  name: 'db-commits',
  kind: 'scenario',
  budgetSeconds: () => 120,
  run,
  targets: [
    { name: 'db_commits_per_inbox_post', figure: 'db-commits.commits_per_inbox_post', op: '<=', target: 1, unit: '' },
    { name: 'db_commits_per_run', figure: 'db-commits.commits_per_run', op: '<=', target: 4, unit: '' },
  ],
};
