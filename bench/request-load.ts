// autocannon with a request built per call: what `ctx.measureAutocannon` (one fixed request)
// cannot do for writes that need a fresh Idempotency-Key and a rotating path each time.
import { createRequire } from 'node:module';
import { assertLoopback, type AutocannonFigures, type BenchContext } from './scenario.js';

export interface BuiltRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export interface RequestLoadOptions {
  /** Origin only, e.g. http://127.0.0.1:8080. */
  readonly origin: string;
  readonly connections: number;
  /** Seconds of unmeasured load first. */
  readonly warmup: number;
  /** Called once per request, in send order. */
  readonly build: (seq: number) => BuiltRequest;
}

// autocannon ships no types: the slice used here, at this I/O edge.
interface Instance {
  stop(): void;
}
interface Result {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  latency: { p50: number; p99: number };
  requests: { total: number };
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (opts: Record<string, unknown>, done: (err: Error | null, result: Result) => void) => Instance;

export interface RequestLoadFigures extends AutocannonFigures {
  /** e.g. "201:5120" — what the server answered, so a wall of 4xx is not read as throughput. */
  readonly statuses: string;
}

export async function measureRequests(ctx: BenchContext, opts: RequestLoadOptions): Promise<RequestLoadFigures> {
  assertLoopback(opts.origin);
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  let seq = 0;
  const once = (duration: number): Promise<Result> =>
    new Promise((resolve, reject) => {
      if (ctx.signal.aborted) return reject(new Error('aborted'));
      const instance = autocannon(
        {
          url: opts.origin,
          connections: opts.connections,
          pipelining: 1, // the service cannot answer pipelined requests (see api-read.ts)
          duration,
          timeout: 10,
          requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, ...opts.build(seq++) }) }],
        },
        (err, result) => (err ? reject(err) : resolve(result)),
      );
      ctx.onCleanup(() => instance.stop());
      ctx.signal.addEventListener('abort', () => instance.stop(), { once: true });
    });
  if (opts.warmup > 0) await once(opts.warmup);
  const r = await once(ctx.seconds);
  const statuses = Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => `${code}:${s.count}`).join(' ');
  return {
    requests_per_sec: Math.round(r.requests.total / Math.max(r.duration, 1e-3)),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    statuses,
  };
}
