import type { RoleStarter } from '../runtime/index.js';
import { closeJobContext, createJobContext } from './job-context.js';
import { startSweeps } from './start-sweeps.js';
import { watchLostWorkers } from './watch-lost-workers.js';

export { createJobContext, closeJobContext, type JobContext } from './job-context.js';
export { ENGINE_HOOKS } from './engine-hooks.js';
export { deliverOutbox, attemptTimeoutMs, type DeliverySummary } from './deliver-outbox.js';
export { updateOutboxGauges } from './outbox-gauges.js';
export { purgeOutbox, type PurgeSummary } from './purge-outbox.js';
export { expireCredentials, type ExpireCredentialsSummary } from './expire-credentials.js';
export { recoverConnectionOperationsPass } from './recover-connection-operations.js';
export { SWEEP_NAMES, SweepJob, sweepQueue, type SweepName } from './sweep-job.js';
export { SWEEPS, runSweep, type Sweep } from './sweep-table.js';
export { startSweeps, PGBOSS_SCHEMA, SWEEP_CRON } from './start-sweeps.js';
export { watchLostWorkers } from './watch-lost-workers.js';
export { RESPONSE_BYTES_KEPT } from './webhook-delivery.js';

/** Sweeps and the outbox sender, on control and all processes (never on workers). */
const startJobs: RoleStarter = async (services) => {
  const context = createJobContext(services);
  const sweeps = await startSweeps(context);
  const lostWorkers = watchLostWorkers(context);
  return {
    async stop() {
      await lostWorkers.stop();
      await sweeps.stop();
      closeJobContext(context);
    },
  };
};

/** Starters of the background sweeps and the outbox sender (control and all roles). */
export const jobStarters: RoleStarter[] = [startJobs];
