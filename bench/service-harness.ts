// Runs the real service for the service scenarios: a fresh database (migrated by the compiled
// bin), a private Redis key prefix, one working folder shared by every process of a scenario
// (the key ring that encrypts provider credentials and the checkpoint object store must be the
// same for control and worker processes), and `node dist/main.js run --role …` children that
// are stopped at cleanup, also when the scenario failed or timed out.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { BenchContext } from './scenario.js';

/** The compiled bin: dist/bench/service-harness.js → dist/main.js. */
export const MAIN_JS = fileURLToPath(new URL('../main.js', import.meta.url));

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 6_000; // below run.ts's 10 s cleanup bound, so SIGKILL still fits in it
const OUTPUT_KEEP_CHARS = 16_000;

/** Everything the processes of one scenario share. */
export interface ServiceEnv {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly kvPrefix: string;
  /** Working folder: data/keyring.json and data/objects of every process. */
  readonly dir: string;
}

export type ServiceRole = 'all' | 'control' | 'worker';

export interface ServiceProcess {
  readonly role: ServiceRole;
  readonly pid: number;
  readonly port: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly child: ChildProcess;
  /** Settles with the exit code or signal once the process is gone. */
  readonly exited: Promise<string>;
  /** The last few KB of stdout and stderr, for error messages. */
  output(): string;
}

/** A sample's value from a metrics text: `name` alone, or the series whose labels include `label` (e.g. `kind="inbox"`); 0 when absent. */
export type MetricValue = (name: string, label?: string) => number;

/**
 * A service process's Prometheus metrics on a port of their own: the SVC_* settings to start
 * it with, and `read()`, which scrapes them once.
 */
export async function serviceMetrics(): Promise<{ env: Record<string, string>; read(): Promise<MetricValue> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/metrics`;
  return {
    env: { SVC_METRICS__ENABLED: 'true', SVC_METRICS__HOST: '127.0.0.1', SVC_METRICS__PORT: String(port) },
    read: async () => {
      const text = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then((r) => r.text());
      return (name, label) => {
        const labels = label === undefined ? '(?:\\{[^}]*\\})?' : `\\{[^}]*${label}[^}]*\\}`;
        return Number(new RegExp(`^${name}${labels} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      };
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Fresh database + Redis prefix + working folder, each removed at cleanup; then `migrate`. */
export async function prepareServiceEnv(ctx: BenchContext): Promise<ServiceEnv> {
  const name = `bench_svc_${randomBytes(5).toString('hex')}`;
  await withClient(ctx.urls.database, (c) => c.query(`create database ${name}`));
  // Registered first, so it runs last: after every process using the database has stopped.
  ctx.onCleanup(() => withClient(ctx.urls.database, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined));
  const kvPrefix = `bench:${randomBytes(6).toString('hex')}:`;
  ctx.onCleanup(() => deleteKeys(ctx.urls.redis, kvPrefix));
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  mkdirSync(join(dir, 'data'), { recursive: true });
  ctx.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const url = new URL(ctx.urls.database);
  url.pathname = `/${name}`;
  const env: ServiceEnv = { databaseUrl: url.toString(), redisUrl: ctx.urls.redis, kvPrefix, dir };
  const migrated = await runBin(ctx, env, ['migrate'], {});
  if (migrated.code !== 0) throw new Error(`migrate exited ${migrated.code}: ${migrated.output}`);
  return env;
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined); // reported by the failing command below
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * SVC_* settings common to every process; `overrides` win, and BENCH_SERVICE_ENV (space-separated
 * KEY=VALUE pairs, e.g. `SVC_DATABASE__BACKGROUND_CONNECTIONS=3`) wins over both: a setting
 * measured without a build. The harness, not the service, reads that variable.
 */
function serviceEnvVars(env: ServiceEnv, overrides: Record<string, string>): Record<string, string> {
  const measured = Object.fromEntries(
    (process.env.BENCH_SERVICE_ENV ?? '')
      .split(' ')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    SVC_DATABASE__URL: env.databaseUrl,
    SVC_KV__URL: env.redisUrl,
    SVC_KV__KEY_PREFIX: env.kvPrefix,
    SVC_AUTH__RATE_LIMIT_PER_MINUTE: '0',
    SVC_LOGGING__LEVEL: 'warn',
    SVC_SERVER__SHUTDOWN_GRACE_SECONDS: '1',
    SVC_WORKER__DRAIN_SECONDS: '1',
    ...overrides,
    ...measured,
  };
}

/** Runs a one-shot CLI command of the bin (migrate, bootstrap) to completion, bounded. */
export async function runBin(ctx: BenchContext, env: ServiceEnv, args: string[], overrides: Record<string, string>, input?: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN_JS, ...args], { cwd: env.dir, env: serviceEnvVars(env, overrides), stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stdin.end(input ?? '');
  const kill = (): void => void child.kill('SIGKILL');
  ctx.signal.addEventListener('abort', kill, { once: true });
  const timer = setTimeout(kill, READY_TIMEOUT_MS);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  ctx.signal.removeEventListener('abort', kill);
  return { code, output };
}

/**
 * Node flags for the service processes. BENCH_SERVICE_CPU_PROF=<dir> adds `--cpu-prof` so each
 * process writes a .cpuprofile at its (graceful) exit; read them with `node
 * dist/bench/profile-summary.js <dir>`. BENCH_SERVICE_NODE_FLAGS (space-separated, e.g.
 * `--v8-pool-size=1`) and BENCH_WORKER_NODE_FLAGS (worker processes only) add flags, to measure
 * a V8 or Node setting without a build. The harness, not the service, reads these variables.
 */
function nodeFlags(role: ServiceRole, port: number): string[] {
  const dir = process.env.BENCH_SERVICE_CPU_PROF;
  const split = (v: string | undefined): string[] => (v ?? '').split(' ').filter((f) => f !== '');
  const extra = [...split(process.env.BENCH_SERVICE_NODE_FLAGS), ...(role === 'worker' ? split(process.env.BENCH_WORKER_NODE_FLAGS) : [])];
  // One folder per process (Node 20's --cpu-prof-name has no pid placeholder).
  return dir ? [...extra, '--cpu-prof', `--cpu-prof-dir=${join(dir, `${role}-${port}`)}`] : extra;
}

/** Starts `node dist/main.js run --role <role>` and waits for /readyz 200. */
export async function startServiceProcess(ctx: BenchContext, env: ServiceEnv, role: ServiceRole, overrides: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const vars = serviceEnvVars(env, { SVC_SERVER__PORT: String(port), ...overrides });
  const child = spawn(process.execPath, [...nodeFlags(role, port), MAIN_JS, 'run', '--role', role], { cwd: env.dir, env: vars, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer): void => void (output = (output + d.toString('utf8')).slice(-OUTPUT_KEEP_CHARS));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  // BENCH_SERVICE_OUTPUT_DIR=<dir>: each process's whole output also goes to <dir>/<role>-<port>.log
  // (with BENCH_SERVICE_NODE_FLAGS such as --trace-opt --trace-deopt, what V8 did during a scenario).
  const outputDir = process.env.BENCH_SERVICE_OUTPUT_DIR;
  if (outputDir) {
    mkdirSync(outputDir, { recursive: true });
    const file = createWriteStream(join(outputDir, `${role}-${port}.log`));
    child.stdout.pipe(file);
    child.stderr.pipe(file);
  }
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(String(code ?? signal))));
  ctx.onCleanup(() => stopProcess(child, exited));
  const proc: ServiceProcess = { role, pid: child.pid ?? -1, port, url: `http://127.0.0.1:${port}`, child, exited, output: () => output };
  await waitReady(ctx, proc);
  return proc;
}

async function waitReady(ctx: BenchContext, proc: ServiceProcess): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  let gone: string | null = null;
  void proc.exited.then((how) => (gone = how));
  for (;;) {
    const status = await fetch(`${proc.url}/readyz`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status, () => 0);
    if (status === 200) return;
    if (gone !== null) throw new Error(`${proc.role} process exited (${gone}) before ready:\n${proc.output()}`);
    if (ctx.signal.aborted || performance.now() > deadline) throw new Error(`${proc.role} process not ready in ${READY_TIMEOUT_MS} ms:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGTERM (graceful: drains, closes pools, writes a CPU profile), SIGKILL after a grace. */
export async function stopProcess(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** One query on a short-lived connection (the harness reads run rows directly). */
export function queryRows<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  return withClient(url, async (c) => (await c.query<T>(text, values)).rows);
}

/** The database's committed-transaction counter (pg_stat_database; flushed by backends at most
 *  once a second, so differences over short windows are approximate). */
export async function commitCount(databaseUrl: string): Promise<number> {
  const rows = await queryRows<{ n: string }>(databaseUrl, 'select xact_commit::text as n from pg_stat_database where datname = current_database()');
  return Number(rows[0]?.n ?? NaN);
}
