import { claimOutboxPurgeTurn, OUTBOX_KINDS, purgeSettledOutbox, type OutboxKind } from '../runtime/index.js';
import type { JobContext } from './job-context.js';

export interface PurgeSummary {
  /** False when the kind's purge_interval_seconds had not passed since its last purge. */
  ran: boolean;
  deleted: number;
  /** Delete statements issued (each one short transaction of at most purge_batch rows). */
  batches: number;
}

/**
 * purge_outbox: per kind, once per its purge_interval_seconds (whichever replica runs the
 * pass), deletes delivered rows past delivered_retention_seconds and dead rows past
 * dead_retention_seconds, purge_batch rows per statement, until none is left or the kind's
 * purge_budget_seconds is used. Pending rows are never deleted.
 */
export async function purgeOutbox(context: JobContext): Promise<Record<OutboxKind, PurgeSummary>> {
  const out = {} as Record<OutboxKind, PurgeSummary>;
  for (const kind of OUTBOX_KINDS) out[kind] = await purgeKind(context, kind);
  return out;
}

async function purgeKind(context: JobContext, kind: OutboxKind): Promise<PurgeSummary> {
  const { pool, loaded, logger } = context.services;
  const policy = loaded.outbox[kind];
  // One second of slack so that a pass arriving a hair early does not skip a whole interval.
  if (!(await claimOutboxPurgeTurn(pool, kind, Math.max(0, policy.purge_interval_seconds - 1)))) return { ran: false, deleted: 0, batches: 0 };
  const deadline = Date.now() + policy.purge_budget_seconds * 1000;
  const summary: PurgeSummary = { ran: true, deleted: 0, batches: 0 };
  const targets = [
    { state: 'delivered', retention_seconds: policy.delivered_retention_seconds },
    { state: 'dead', retention_seconds: policy.dead_retention_seconds },
  ] as const;
  for (const target of targets) {
    while (Date.now() < deadline) {
      const deleted = await purgeSettledOutbox(pool, { kind, ...target, limit: policy.purge_batch });
      summary.batches++;
      summary.deleted += deleted;
      if (deleted < policy.purge_batch) break;
    }
  }
  if (summary.deleted > 0) logger.info({ kind, deleted: summary.deleted, batches: summary.batches }, 'outbox purged');
  return summary;
}
