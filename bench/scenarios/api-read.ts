// Scenario: GET /api/v1/agents/{id} with an API key against one real `all` process, with the
// plain load shape of the uws-hello ceiling, so the ratio compares like with like. Each request
// authenticates the key (SHA-256, then the process's credential cache), scopes the workspace and
// reads the agent (the process's read cache): after the first requests, no database round trip.
import { connect } from 'node:net';
import { startModelServer } from '../model-server.js';
import { commandCpuMs, processCpuMs } from '../proc-cpu.js';
import { LOAD_SHAPES, type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { prepareServiceEnv, startServiceProcess } from '../service-harness.js';
import { seedWorkspace } from '../service-seed.js';

const WARMUP_SECONDS = 1;
const PIPELINE_WAIT_MS = 1_000;

async function run(ctx: BenchContext): Promise<Figures> {
  // The model server is only there so the agent's model resolves; reads never call it.
  const model = await startModelServer();
  ctx.onCleanup(() => model.close());
  const env = await prepareServiceEnv(ctx);
  const service = await startServiceProcess(ctx, env, 'all', {
    SVC_DATABASE__POOL_SIZE: String(ctx.poolSize),
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]),
  });
  const seed = await seedWorkspace(ctx, env, service.url, model.url);
  const url = `${service.url}/api/v1/agents/${seed.agentId}`;
  const headers = { authorization: `Bearer ${seed.apiKey}` };
  const probe = await seed.api.call('GET', `/api/v1/agents/${seed.agentId}`);
  if (probe.status !== 200) throw new Error(`GET agent answered ${probe.status}`);
  const warmup = Math.min(WARMUP_SECONDS, ctx.seconds);
  const serviceCpuBefore = processCpuMs(service.pid);
  const postgresCpuBefore = commandCpuMs('postgres');
  const plain = await ctx.measureAutocannon(url, { ...LOAD_SHAPES.plain, warmup, headers });
  // CPU per request of the service and of PostgreSQL: the warm-up's requests are estimated at
  // the measured rate (autocannon reports no count for them), hence approximate.
  const requests = Math.max(1, plain.requests_per_sec * (ctx.seconds + warmup));
  const perRequestUs = (ms: number): number => Math.round((ms * 1000) / requests);
  const serviceCpuUs = perRequestUs(processCpuMs(service.pid) - serviceCpuBefore);
  const postgresCpuUs = perRequestUs(commandCpuMs('postgres') - postgresCpuBefore);
  return {
    requests_per_sec: plain.requests_per_sec,
    service_cpu_us_per_request_approx: serviceCpuUs,
    postgres_cpu_us_per_request_approx: postgresCpuUs,
    p50_ms: plain.p50_ms,
    p99_ms: plain.p99_ms,
    errors: plain.errors,
    pipelined_responses: await pipelinedResponses(service.port, `/api/v1/agents/${seed.agentId}`, seed.apiKey),
    pool_size: ctx.poolSize,
  };
}

/**
 * Why the saturating (pipelined) shape is not used against the service: uWS aborts a deferred
 * response when more requests arrive behind it in the same read (uNetworking/uWebSockets.js
 * #277, #1301, wontfix), and every API handler answers after an await, so a pipelining client
 * gets nothing back. Recorded as a figure so a change of that behaviour shows up here:
 * "<answered>/<sent>" for 3 requests written in one segment.
 */
async function pipelinedResponses(port: number, path: string, apiKey: string): Promise<string> {
  const SENT = 3;
  const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`;
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d: Buffer) => void (received += d.toString('latin1')));
  socket.on('error', () => undefined); // counted as fewer responses
  socket.once('connect', () => void socket.write(request.repeat(SENT)));
  await new Promise((r) => setTimeout(r, PIPELINE_WAIT_MS));
  socket.destroy();
  return `${received.match(/^HTTP\/1\.1 /gm)?.length ?? 0}/${SENT}`;
}

export const apiRead: Scenario = {
  name: 'api-read',
  kind: 'scenario',
  budgetSeconds: (s) => s + WARMUP_SECONDS + 60,
  run,
  // Plain shape on both sides: one request in flight per connection, as HTTP/1.1 clients do.
  ratios: [{ name: 'api_read_vs_uws', numerator: 'api-read.requests_per_sec', denominator: 'uws-hello.plain_requests_per_sec' }],
  targets: [{ name: 'api_read_vs_uws', figure: 'ratios.api_read_vs_uws', op: '>=', target: 0.5, unit: '×' }],
};
