// The contract between the bench runner (run.ts) and every ceiling and scenario, plus the two
// measuring helpers they share: an autocannon driver and a latency summary.
import { createRequire } from 'node:module';

/** Figures a scenario reports: flat, snake_case keys with the unit as suffix (`_ms`, `_us`, `_per_sec`). */
export type Figures = Record<string, number | string>;

export const SCENARIO_KIND = { ceiling: 'ceiling', scenario: 'scenario' } as const;
export type ScenarioKind = (typeof SCENARIO_KIND)[keyof typeof SCENARIO_KIND];

/** `a / b` of two figures, each addressed as `<scenario name>.<figure key>`. */
export interface RatioSpec {
  readonly name: string;
  readonly numerator: string;
  readonly denominator: string;
}

/** A target from the issue, checked against one figure (`<scenario name>.<figure key>`). */
export interface TargetSpec {
  readonly name: string;
  readonly figure: string;
  readonly op: '<=' | '>=';
  readonly target: number;
  readonly unit: string;
}

export interface Scenario {
  readonly name: string;
  readonly kind: ScenarioKind;
  run(ctx: BenchContext): Promise<Figures>;
  /** Hard wall-clock bound for run() plus cleanup; default 3 × seconds + 30 s (see run.ts). */
  readonly budgetSeconds?: (seconds: number) => number;
  readonly ratios?: readonly RatioSpec[];
  readonly targets?: readonly TargetSpec[];
}

export interface BenchUrls {
  readonly database: string;
  readonly redis: string;
}

export interface BenchContext {
  /** Duration of each load phase (autocannon run, commit loop, sample loop). */
  readonly seconds: number;
  /** The service's database pool size; the pg ceiling uses that many concurrent clients. */
  readonly poolSize: number;
  readonly urls: BenchUrls;
  /** Aborted when the scenario's budget runs out; long loops check it. */
  readonly signal: AbortSignal;
  /** Registers a stop action (server close, child kill, pool end). The runner runs them in
   *  reverse order after run() settles OR times out, so a hung scenario still releases all. */
  onCleanup(stop: () => Promise<void> | void): void;
  measureAutocannon(url: string, opts?: AutocannonOptions): Promise<AutocannonFigures>;
  log(message: string): void;
}

export interface AutocannonOptions {
  readonly connections?: number;
  readonly pipelining?: number;
  /** Seconds; defaults to ctx.seconds. */
  readonly duration?: number;
  /** Seconds of unmeasured load first, so JIT and connection setup are out of the figures. */
  readonly warmup?: number;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** Load shapes shared by the hello ceilings and the service scenarios, so their ratios
 *  compare like with like. `saturating` pipelines to find the server's limit; `plain` is
 *  what an HTTP/1.1 client really does (one request in flight per connection) and on this
 *  2-core machine is bound by autocannon itself (~105k/s for both uWS and node:http). */
export const LOAD_SHAPES = {
  saturating: { connections: 100, pipelining: 10 },
  plain: { connections: 50, pipelining: 1 },
} as const;

export interface AutocannonFigures {
  readonly requests_per_sec: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** Socket errors + timeouts + non-2xx responses. */
  readonly errors: number;
}

export interface LatencySummary {
  readonly samples: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly mean_ms: number;
  readonly max_ms: number;
}

/** Nearest-rank percentiles over all samples (exact; sample counts here are ≤ ~1e5). */
export function summarizeLatency(samplesMs: readonly number[]): LatencySummary {
  if (samplesMs.length === 0) throw new Error('summarizeLatency: no samples');
  const sorted = Float64Array.from(samplesMs).sort();
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    samples: sorted.length,
    p50_ms: round3(at(0.5)),
    p99_ms: round3(at(0.99)),
    mean_ms: round3(sum / sorted.length),
    max_ms: round3(sorted[sorted.length - 1] ?? NaN),
  };
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** The issue bounds all traffic to 127.0.0.1; every URL the harness dials passes here first. */
export function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(host)) {
    throw new Error(`bench only sends traffic to 127.0.0.1; refusing ${host}`);
  }
}

// autocannon ships no types; this is the slice of its API and result the harness reads.
interface AutocannonInstance {
  stop(): void;
}
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  latency: { p50: number; p99: number };
  requests: { total: number };
}
type AutocannonRun = (
  opts: Record<string, unknown>,
  done: (err: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

export async function measureAutocannon(
  url: string,
  opts: AutocannonOptions,
  defaults: { seconds: number; signal: AbortSignal; onCleanup: BenchContext['onCleanup'] },
): Promise<AutocannonFigures> {
  assertLoopback(url);
  // autocannon is CommonJS without declarations: loaded through require at this I/O edge.
  const autocannon = createRequire(import.meta.url)('autocannon') as AutocannonRun;
  const base = {
    url,
    connections: opts.connections ?? 100,
    pipelining: opts.pipelining ?? 1,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    timeout: 10,
  };
  const once = (duration: number): Promise<AutocannonResult> =>
    new Promise((resolve, reject) => {
      if (defaults.signal.aborted) return reject(new Error('aborted'));
      const instance = autocannon({ ...base, duration }, (err, result) => (err ? reject(err) : resolve(result)));
      defaults.onCleanup(() => instance.stop());
      defaults.signal.addEventListener('abort', () => instance.stop(), { once: true });
    });
  if ((opts.warmup ?? 0) > 0) await once(opts.warmup ?? 0);
  const r = await once(opts.duration ?? defaults.seconds);
  return {
    // total / actual duration rather than autocannon's per-second average, which drops the
    // partial last second and rounds.
    requests_per_sec: Math.round(r.requests.total / Math.max(r.duration, 1e-3)),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
  };
}
