import type { Stoppable } from '../runtime/index.js';
import type { JobContext } from './job-context.js';

/**
 * The quick part of expire_leases on control (and all) processes: every
 * worker.liveness_scan_ms, requeue the runs of workers whose database session is gone, so a
 * killed worker's runs continue elsewhere in well under a second instead of after their lease
 * (worker.authority_seconds) and the next sweep slot. A plain timer, not a pg-boss job: a pass
 * is one statement that finds nothing almost always, and pg-boss's bookkeeping would cost
 * several commits per pass. Replicas may run passes at the same moment; the statement skips
 * rows another replica has locked (SKIP LOCKED), so each lost run is requeued once.
 */
export function watchLostWorkers(context: JobContext): Stoppable {
  const { services } = context;
  const hooks = context.engine.lost_workers ?? [];
  let running: Promise<void> | null = null;
  let failing = false;
  const pass = (): void => {
    if (running || hooks.length === 0) return;
    running = (async () => {
      for (const hook of hooks) await hook(services);
    })()
      .then(
        () => {
          if (failing) services.logger.info('lost-worker scan works again');
          failing = false;
        },
        (error: unknown) => {
          // Logged once per outage: the database being away is reported elsewhere.
          if (!failing) services.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'lost-worker scan failed; retrying every interval');
          failing = true;
        },
      )
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(pass, services.config.worker.liveness_scan_ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
