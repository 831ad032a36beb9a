import { closeOrphanedAttempts, expireLeases, forgetLostWorkerSessions, idleThreadsWithPendingInput } from '../../runtime/index.js';
import { CHANNEL_RUN_ACCEPTED, type EngineContext } from '../engine/index.js';
import { advanceThread, sealAndAdvance } from '../threads/index.js';

const BATCH = 100;

/**
 * expire_leases (spec 1.4): ends attempts whose lease expired. Below worker.max_attempts the
 * run is accepted again and continues from its last checkpoint on any worker (woken by
 * NOTIFY); at max_attempts it fails with failure code attempts_exhausted. Idempotent and
 * bounded; replicas skip each other's rows (SKIP LOCKED in expireLeases). It also closes attempt
 * rows left open on runs that were sealed or handed off (a process killed in between).
 */
export async function expireLeasesPass(context: EngineContext, options: { backstops?: boolean } = {}): Promise<{ requeued: number; failed: number; closed: number }> {
  const { pool, logger } = context.services;
  const { requeued, exhausted } = await expireLeases(pool, BATCH);
  let closed = 0;
  if (options.backstops !== false) {
    // Attempt rows a killed process left open on runs that moved on (see closeOrphanedAttempts).
    closed = await closeOrphanedAttempts(pool, BATCH);
    if (closed > 0) logger.warn({ closed }, 'expire_leases closed attempt rows left open by a stopped process');
    // After the requeue above: a dead worker's registration goes once it owns no running run.
    await forgetLostWorkerSessions(pool, BATCH);
  }
  for (const run of requeued) {
    await pool.query('select pg_notify($1, $2)', [CHANNEL_RUN_ACCEPTED, run.id]);
    await context.bus.publish(run.thread_id, [{ type: 'run.status', run_id: run.id, status: 'accepted', run: { id: run.id, status: 'accepted', attempts: run.attempts } }]);
  }
  let failed = 0;
  for (const run of exhausted) {
    const message = `the run's attempts kept ending without finishing (${run.charged_attempts} of ${run.max_attempts} charged attempts used)`;
    const sealed = await sealAndAdvance(context, run, run.current_attempt_id, { status: 'failed', failure: { code: 'attempts_exhausted', message }, usage: run.usage }, []);
    if (sealed) failed++;
  }
  if (requeued.length + failed > 0) logger.info({ requeued: requeued.length, failed }, 'expire_leases');
  return { requeued: requeued.length, failed, closed };
}

/**
 * The quick part of expire_leases, run every worker.liveness_scan_ms on control processes:
 * requeues the runs of workers whose database session is gone (and, on the way, of expired
 * leases) without the backstops of the full pass. One statement when nothing is lost.
 */
export function requeueLostWorkersPass(context: EngineContext): Promise<{ requeued: number; failed: number; closed: number }> {
  return expireLeasesPass(context, { backstops: false });
}

/** advance_threads (spec 1.4): starts the next queued input of idle threads. */
export async function advanceThreadsPass(context: EngineContext): Promise<number> {
  const threads = await idleThreadsWithPendingInput(context.services.pool, BATCH);
  let started = 0;
  for (const thread of threads) if (await advanceThread(context, thread.workspace_id, thread.id)) started++;
  return started;
}
