import PgBoss from 'pg-boss';
import { Value } from '@sinclair/typebox/value';
import { backgroundLane, type Stoppable } from '../runtime/index.js';
import type { JobContext } from './job-context.js';
import { pgBossExecuteSql } from './pgboss-db.js';
import { SWEEP_NAMES, SweepJob, sweepQueue, type SweepName } from './sweep-job.js';
import { SWEEPS } from './sweep-table.js';

/** pg-boss keeps its own schema, created and migrated by pg-boss itself at start. */
export const PGBOSS_SCHEMA = 'pgboss';
/** The cron of every sweep's pg-boss schedule (pg-boss cron resolves minutes at best). */
export const SWEEP_CRON = '* * * * *';
/** A pass that has not finished by then is failed by pg-boss; passes are far shorter. */
const PASS_EXPIRY_SECONDS = 900;

const pollSeconds = (interval: number) => Math.min(10, Math.max(0.5, interval / 2));

/**
 * Starts the eight sweeps on a control (or all) process. Coordination across replicas lives
 * in pg-boss's tables, not in process memory:
 * - one queue per sweep with policy 'stately': at most one queued and one active job per
 *   sweep (unique indexes), so passes of one sweep never overlap on any replica;
 * - jobs are created throttled: `singletonSeconds = interval` puts each job in the interval's
 *   time slot, and pg-boss's unique (name, singleton_on) index drops every other insert for
 *   that slot, so however many replicas tick, one pass runs per interval;
 * - each process ticks every interval (sub-minute resolution) and pg-boss's own schedule
 *   (cron every minute, same singletonSeconds, evaluated by one replica per minute) backs
 *   the ticks up; both land in the same slot;
 * - fetching uses `for update skip locked`, so exactly one replica's worker takes the job.
 * A failed pass is logged and its job fails (retryLimit 0): the next slot retries it.
 */
export async function startSweeps(context: JobContext): Promise<Stoppable> {
  const { services } = context;
  // pg-boss shares the process pool through an adapter that keeps its unawaited statements
  // from rejecting at shutdown or while the database is away (see pgBossExecuteSql), in the
  // pool's background lane: its polling and maintenance never hold up a request (PoolLane), and
  // they are not counted against database.background_connections, which is for runs' work: a
  // slow maintenance statement must not hold the connection a run's seal waits for.
  const executeSql = pgBossExecuteSql(backgroundLane(services.pool, { bounded: false }), services.logger);
  const boss = new PgBoss({ db: { executeSql: executeSql as never }, schema: PGBOSS_SCHEMA });
  boss.on('error', (error) => services.logger.warn({ err: error.message }, 'pg-boss error'));
  await boss.start();
  const timers: NodeJS.Timeout[] = [];
  try {
    for (const name of SWEEP_NAMES) timers.push(await startSweep(context, boss, name));
  } catch (error) {
    timers.forEach(clearInterval);
    await boss.stop({ graceful: false, close: false });
    throw error;
  }
  return {
    async stop() {
      timers.forEach(clearInterval);
      // Graceful: a pass in flight finishes (passes are bounded) before the pool closes.
      await boss.stop({ graceful: true, wait: true, close: false, timeout: 10_000 });
    },
  };
}

async function startSweep(context: JobContext, boss: PgBoss, name: SweepName): Promise<NodeJS.Timeout> {
  const { logger } = context.services;
  const interval = SWEEPS[name].intervalSeconds(context);
  const queue = sweepQueue(name);
  const data: SweepJob = { type: name };
  await boss.createQueue(queue, { name: queue, policy: 'stately', retryLimit: 0, expireInSeconds: PASS_EXPIRY_SECONDS });
  await boss.schedule(queue, SWEEP_CRON, data, { singletonSeconds: interval, retryLimit: 0 });
  const workerId = await boss.work<SweepJob>(queue, { pollingIntervalSeconds: pollSeconds(interval), batchSize: 1 }, async (jobs) => {
    for (const job of jobs) await runPass(context, name, job.data);
  });
  const tick = () => {
    boss
      .sendThrottled(queue, data, { retryLimit: 0 }, interval)
      .then((id) => id && boss.notifyWorker(workerId))
      .catch((error: Error) => logger.warn({ sweep: name, err: error.message }, 'could not queue a sweep pass; the next tick retries'));
  };
  tick();
  return setInterval(tick, interval * 1000);
}

async function runPass(context: JobContext, name: SweepName, data: unknown): Promise<void> {
  const { logger } = context.services;
  if (!Value.Check(SweepJob, data) || data.type !== name) {
    logger.error({ sweep: name }, 'sweep job with an unexpected payload; skipped');
    return;
  }
  const started = Date.now();
  try {
    await SWEEPS[name].run(context);
    logger.debug({ sweep: name, ms: Date.now() - started }, 'sweep pass done');
  } catch (error) {
    logger.error({ sweep: name, err: error instanceof Error ? error.message : String(error) }, 'sweep pass failed; retried at the next interval');
    throw error;
  }
}
