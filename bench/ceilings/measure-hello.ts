// Shared body of the two hello-world ceilings: a trivial server in a child process, driven by
// autocannon from the harness process with both load shapes.
//
// Child process, measured on this 2-core machine (autocannon 100 conns × 10 pipelined, 3 s):
// uWS in the harness process 205–216k req/s, in a child 180–195k. In-process looks faster
// (loopback without cross-core wakeups) but the service scenarios necessarily run the real
// service as a child, so the ceiling uses the same topology; in-process, a slow server would
// also steal the load generator's CPU and the two could not be told apart.
import { fileURLToPath } from 'node:url';
import { startChildServer } from '../child-server.js';
import { LOAD_SHAPES, type BenchContext, type Figures } from '../scenario.js';

const WARMUP_SECONDS = 1;

export async function measureHello(ctx: BenchContext, kind: 'uws' | 'http'): Promise<Figures> {
  const file = fileURLToPath(new URL('./hello-server.js', import.meta.url));
  const { port } = await startChildServer(ctx, file, [kind]);
  const url = `http://127.0.0.1:${port}/`;
  const warmup = Math.min(WARMUP_SECONDS, ctx.seconds);
  // Plain first: measured here, the plain shape run right after a saturating run came out
  // 20–35% lower than run first (uWS 75k vs 112k), while the saturating figure barely moved.
  const plain = await ctx.measureAutocannon(url, { ...LOAD_SHAPES.plain, warmup });
  const saturating = await ctx.measureAutocannon(url, { ...LOAD_SHAPES.saturating, warmup });
  return {
    requests_per_sec: saturating.requests_per_sec,
    p50_ms: saturating.p50_ms,
    p99_ms: saturating.p99_ms,
    errors: saturating.errors,
    plain_requests_per_sec: plain.requests_per_sec,
    plain_p50_ms: plain.p50_ms,
    plain_p99_ms: plain.p99_ms,
    plain_errors: plain.errors,
  };
}
