// `npm run bench`: runs the ceilings, then the scenarios, each under a hard time budget, and
// prints ONE JSON document on stdout (also written to --json-out) and a human table on
// stderr, so `node dist/bench/run.js > bench.json` captures clean JSON. Exit code 1 when a
// scenario failed or timed out (its figures become {error}); unmet targets do not fail the run.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { machineCosts } from './ceilings/machine.js';
import { nodeHttpHello } from './ceilings/node-http-hello.js';
import { pgCommit } from './ceilings/pg-commit.js';
import { redisPubsub } from './ceilings/redis-pubsub.js';
import { uwsHello } from './ceilings/uws-hello.js';
import { checkTargets, compareToReference, computeRatios, describeMachine, renderTable, type BenchReport } from './report.js';
import { assertLoopback, measureAutocannon, type BenchContext, type Figures, type Scenario } from './scenario.js';
import { apiRead } from './scenarios/api-read.js';
import { apiWrite } from './scenarios/api-write.js';
import { checkpointCodec } from './scenarios/checkpoint-codec.js';
import { crashRecovery } from './scenarios/crash-recovery.js';
import { dbCommits } from './scenarios/db-commits.js';
import { runLatency, runLatency32 } from './scenarios/run-latency.js';
import { runThroughput } from './scenarios/run-throughput.js';
import { streamFanout } from './scenarios/stream-fanout.js';
import { streamFanoutWs } from './scenarios/stream-fanout-ws.js';
import { threadHistory } from './scenarios/thread-history.js';
import { ISSUE_TARGETS } from './targets.js';

/** Every ceiling and scenario, in run order within its kind. New scenarios are added here. */
function registry(): Scenario[] {
  return [uwsHello, nodeHttpHello, pgCommit, redisPubsub, machineCosts, checkpointCodec, apiRead, apiWrite, dbCommits, runLatency, runLatency32, runThroughput, crashRecovery, streamFanout, streamFanoutWs, threadHistory];
}

const CLEANUP_TIMEOUT_MS = 10_000;
const EXIT_GRACE_MS = 2_000;

interface Settings {
  readonly seconds: number;
  readonly poolSize: number;
  readonly only: string[] | null;
  readonly jsonOut: string | undefined;
  readonly databaseUrl: string;
  readonly redisUrl: string;
}

const USAGE = `usage: node dist/bench/run.js [--only a,b] [--seconds N] [--pool-size N]
       [--json-out path] [--database-url url] [--redis-url url] [--list]`;

function parseSettings(argv: string[]): Settings | 'list' {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      seconds: { type: 'string', default: '5' },
      'pool-size': { type: 'string', default: '10' },
      'json-out': { type: 'string' },
      'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
      list: { type: 'boolean', default: false },
    },
  });
  if (values.list) return 'list';
  const seconds = Number(values.seconds);
  const poolSize = Number(values['pool-size']);
  if (!(seconds > 0 && seconds <= 600)) throw new Error(`--seconds must be in (0, 600], got ${values.seconds}`);
  if (!(Number.isInteger(poolSize) && poolSize > 0)) throw new Error(`--pool-size must be a positive integer`);
  const databaseUrl = values['database-url'];
  const redisUrl = values['redis-url'];
  assertLoopback(databaseUrl);
  assertLoopback(redisUrl);
  const only = values.only ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : null;
  return { seconds, poolSize, only, jsonOut: values['json-out'], databaseUrl, redisUrl };
}

/** Where a fatal error that escaped a scenario (uncaught exception) is routed. */
interface FatalTrap {
  onFatal: ((err: Error) => void) | undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An error escaping a scenario's callbacks fails that scenario instead of the whole run. */
function installFatalTrap(): FatalTrap {
  const trap: FatalTrap = { onFatal: undefined };
  const onFatal = (err: unknown): void => {
    const error = err instanceof Error ? err : new Error(String(err));
    if (trap.onFatal) return trap.onFatal(error);
    process.stderr.write(`bench: fatal outside a scenario: ${error.stack ?? error.message}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  return trap;
}

async function runCleanups(cleanups: Array<() => Promise<void> | void>, log: (m: string) => void): Promise<boolean> {
  let clean = true;
  // Reverse order: what was started last (a client) stops before what it depends on (a server).
  for (const stop of cleanups.reverse()) {
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`cleanup exceeded ${CLEANUP_TIMEOUT_MS} ms`)), CLEANUP_TIMEOUT_MS);
    });
    try {
      await Promise.race([Promise.resolve().then(stop), bounded]);
    } catch (err) {
      clean = false;
      log(`cleanup: ${messageOf(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }
  return clean;
}

/** A fresh context per scenario: its own abort signal and its own cleanup list. */
function makeContext(
  name: string,
  settings: Settings,
  signal: AbortSignal,
  cleanups: Array<() => Promise<void> | void>,
): BenchContext {
  const onCleanup: BenchContext['onCleanup'] = (stop) => void cleanups.push(stop);
  return {
    seconds: settings.seconds,
    poolSize: settings.poolSize,
    urls: { database: settings.databaseUrl, redis: settings.redisUrl },
    signal,
    onCleanup,
    measureAutocannon: (url, opts = {}) => measureAutocannon(url, opts, { seconds: settings.seconds, signal, onCleanup }),
    log: (m) => void process.stderr.write(`[bench ${name}] ${m}\n`),
  };
}

/** Runs one scenario under its budget; never throws. `clean` is false if something may linger. */
async function runScenario(s: Scenario, settings: Settings, trap: FatalTrap): Promise<{ figures: Figures; clean: boolean }> {
  const controller = new AbortController();
  const cleanups: Array<() => Promise<void> | void> = [];
  const ctx = makeContext(s.name, settings, controller.signal, cleanups);
  const log = ctx.log;
  const budgetSeconds = s.budgetSeconds ? s.budgetSeconds(settings.seconds) : settings.seconds * 3 + 30;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${budgetSeconds} s`)), budgetSeconds * 1000);
    trap.onFatal = (err) => reject(new Error(`uncaught: ${err.message}`));
  });
  const started = performance.now();
  let figures: Figures;
  let clean = true;
  log('start');
  try {
    figures = { ...(await Promise.race([s.run(ctx), stopped])) };
  } catch (err) {
    figures = { error: messageOf(err) };
    clean = false; // run() may still be pending; its handles are closed below but may not all be.
    log(`error: ${messageOf(err)}`);
  } finally {
    clearTimeout(timer);
    trap.onFatal = undefined;
    controller.abort();
  }
  const cleaned = await runCleanups(cleanups, log);
  figures.elapsed_ms = Math.round(performance.now() - started);
  log(`done in ${figures.elapsed_ms} ms`);
  return { figures, clean: clean && cleaned };
}

function buildReport(settings: Settings, ran: Scenario[], results: Map<string, Figures>, startedAt: string): BenchReport {
  const ratios = computeRatios(ran, results);
  const pick = (kind: Scenario['kind']): Record<string, Figures> =>
    Object.fromEntries(ran.filter((s) => s.kind === kind).map((s) => [s.name, results.get(s.name) ?? {}]));
  return {
    machine: describeMachine(),
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    settings: { seconds: settings.seconds, pool_size: settings.poolSize, only: settings.only },
    ceilings: pick('ceiling'),
    scenarios: pick('scenario'),
    ratios,
    targets: checkTargets(ran, results, ratios, ISSUE_TARGETS),
    machine_vs_reference: compareToReference(results),
  };
}

async function main(): Promise<number> {
  let parsed: Settings | 'list';
  try {
    parsed = parseSettings(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${messageOf(err)}\n${USAGE}\n`);
    return 2;
  }
  const all = registry();
  if (parsed === 'list') {
    for (const s of all) process.stdout.write(`${s.name}\t${s.kind}\n`);
    return 0;
  }
  const settings = parsed;
  const unknown = (settings.only ?? []).filter((name) => !all.some((s) => s.name === name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown scenario(s): ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}\n`);
    return 2;
  }
  const selected = all.filter((s) => settings.only === null || settings.only.includes(s.name));
  // Ceilings first: they calibrate the machine before anything else has warmed or loaded it.
  const ordered = [...selected.filter((s) => s.kind === 'ceiling'), ...selected.filter((s) => s.kind === 'scenario')];

  const trap = installFatalTrap();
  const started_at = new Date().toISOString();
  const results = new Map<string, Figures>();
  let allClean = true;
  for (const s of ordered) {
    const { figures, clean } = await runScenario(s, settings, trap);
    results.set(s.name, figures);
    allClean &&= clean;
  }
  const report = buildReport(settings, ordered, results, started_at);
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (settings.jsonOut) writeFileSync(settings.jsonOut, json);
  process.stdout.write(json);
  process.stderr.write(`\n${renderTable(report)}`);
  if (!allClean) {
    // A timed-out scenario may still hold a socket; do not let it keep the CLI alive.
    setTimeout(() => process.exit(process.exitCode ?? 1), EXIT_GRACE_MS).unref();
  }
  return [...results.values()].some((f) => 'error' in f) ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
