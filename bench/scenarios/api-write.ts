// Scenario: POST /api/v1/threads/{id}/inbox with a fresh Idempotency-Key per request, against
// one real `control` process (API, no worker). Without a worker every run stays `accepted`, so
// the figure is the write path alone — authenticate, claim the idempotency key, lock the
// thread row, insert the entry (and, on an idle thread, the run), record the response, NOTIFY
// — and not the model loop competing for the same two cores (run-throughput measures that).
// Requests rotate over one thread per connection: writes to one thread serialise on its row
// lock by design, so a single hot thread would measure lock waits, not the API.
import { startModelServer } from '../model-server.js';
import { commandCpuMs, processCpuMs } from '../proc-cpu.js';
import { measureRequests } from '../request-load.js';
import { LOAD_SHAPES, type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { commitCount, prepareServiceEnv, serviceMetrics, startServiceProcess } from '../service-harness.js';
import { createThreads, inboxBody, postMessage, seedWorkspace } from '../service-seed.js';

// Unmeasured seconds of the same load first: the control process's JIT compiles the write path
// through its first ~6–8 s under load (`--trace-opt`: ~300 functions optimized by then, a few
// after; bench/RESULTS.md session 24), and the figure describes a warm service, as the run
// scenarios' warm-ups do. Never longer than the measured window (`--seconds`, 5 in a default full
// run). BENCH_API_WRITE_WARMUP_SECONDS overrides it (1 until session 24).
const WARMUP_SECONDS = Number(process.env.BENCH_API_WRITE_WARMUP_SECONDS ?? 6);
const STATS_FLUSH_MS = 1_100;

async function run(ctx: BenchContext): Promise<Figures> {
  const model = await startModelServer();
  ctx.onCleanup(() => model.close());
  const env = await prepareServiceEnv(ctx);
  const metrics = await serviceMetrics();
  const service = await startServiceProcess(ctx, env, 'control', {
    SVC_DATABASE__POOL_SIZE: String(ctx.poolSize),
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]),
    ...metrics.env,
  });
  // The inbox batcher's counters (svc_statement_batch_*_total{kind="inbox"}).
  const batching = async () => {
    const value = await metrics.read();
    return { inputs: value('svc_statement_batch_items_total', 'kind="inbox"'), statements: value('svc_statement_batch_statements_total', 'kind="inbox"') };
  };
  const seed = await seedWorkspace(ctx, env, service.url, model.url);
  const connections = LOAD_SHAPES.plain.connections;
  const threads = await createThreads(seed, connections);
  // One request through the JSON client first, so a broken route fails loudly, not as 4xx/s.
  await postMessage(seed, threads[0] ?? '', 'probe');
  const body = JSON.stringify(inboxBody(seed, 'hello from the bench'));
  const run = `${process.pid}-${Date.now()}`;
  // Commits per request from the database's counter; it also counts the warm-up, so it is
  // divided by every request sent (approximate: backends flush it at most once a second).
  const commitsBefore = await commitCount(env.databaseUrl);
  // CPU per request of the service process and of PostgreSQL (every backend on the machine),
  // over the same requests: a figure that other tenants' load does not move as much as req/s.
  const serviceCpuBefore = processCpuMs(service.pid);
  const postgresCpuBefore = commandCpuMs('postgres');
  const batchingBefore = await batching();
  let sent = 0;
  const figures = await measureRequests(ctx, {
    origin: service.url,
    connections,
    warmup: Math.min(WARMUP_SECONDS, ctx.seconds),
    build: (seq) => (sent++, {
      method: 'POST',
      path: `/api/v1/threads/${threads[seq % threads.length] ?? ''}/inbox`,
      headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json', 'idempotency-key': `bench-${run}-${seq}` },
      body,
    }),
  });
  const serviceCpuMs = processCpuMs(service.pid) - serviceCpuBefore;
  const postgresCpuMs = commandCpuMs('postgres') - postgresCpuBefore;
  const batchingAfter = await batching();
  // How many POSTs shared an inbox statement (EnqueueBatcher), over the same requests.
  const inputsPerStatement = Math.round(((batchingAfter.inputs - batchingBefore.inputs) / Math.max(batchingAfter.statements - batchingBefore.statements, 1)) * 10) / 10;
  await new Promise((r) => setTimeout(r, STATS_FLUSH_MS));
  const commitsPerRequest = (await commitCount(env.databaseUrl)) - commitsBefore;
  return { ...figures, db_commits_per_request_approx: Math.round((commitsPerRequest / Math.max(sent, 1)) * 10) / 10, service_cpu_us_per_request_approx: Math.round((serviceCpuMs * 1000) / Math.max(sent, 1)), postgres_cpu_us_per_request_approx: Math.round((postgresCpuMs * 1000) / Math.max(sent, 1)), inputs_per_statement: inputsPerStatement, threads: threads.length, connections, role: 'control (no worker)', pool_size: ctx.poolSize };
}

export const apiWrite: Scenario = {
  name: 'api-write',
  kind: 'scenario',
  budgetSeconds: (s) => s + WARMUP_SECONDS + 60,
  run,
  ratios: [
    // Each accepted write is at least one transaction: how close the API gets to bare commits.
    { name: 'api_write_vs_pg_commit', numerator: 'api-write.requests_per_sec', denominator: 'pg-commit.commits_per_sec' },
  ],
};
