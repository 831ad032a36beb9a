import { OUTBOX_KINDS, outboxStats, trackOutboxBacklog } from '../runtime/index.js';
import type { JobContext } from './job-context.js';

/**
 * Sets svc_outbox_backlog_alert, svc_outbox_dead and svc_outbox_pending per kind. The alert
 * turns 1 when the backlog (more than backlog_count pending rows, or the oldest pending row
 * older than backlog_age_seconds) has held without a break for backlog_alert_seconds; that
 * start time lives in the database because passes move between replicas.
 */
export async function updateOutboxGauges(context: JobContext): Promise<void> {
  const { pool, loaded } = context.services;
  const stats = new Map((await outboxStats(pool)).map((s) => [s.kind, s]));
  for (const kind of OUTBOX_KINDS) {
    const policy = loaded.outbox[kind];
    const s = stats.get(kind) ?? { pending: 0, oldest_pending_seconds: 0, dead: 0 };
    const holds = s.pending > policy.backlog_count || (s.pending > 0 && s.oldest_pending_seconds > policy.backlog_age_seconds);
    const heldSeconds = await trackOutboxBacklog(pool, kind, holds);
    context.metrics.backlogAlert.set({ kind }, holds && heldSeconds >= policy.backlog_alert_seconds ? 1 : 0);
    context.metrics.dead.set({ kind }, s.dead > 0 ? 1 : 0);
    context.metrics.pending.set({ kind }, s.pending);
  }
}
