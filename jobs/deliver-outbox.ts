import {
  claimOutboxBatch,
  markOutboxDelivered,
  markOutboxFailed,
  OUTBOX_KINDS,
  releaseOutboxClaim,
  retryDelaySeconds,
  type DeliveryOutcome,
  type OutboxKind,
  type OutboxPolicy,
  type OutboxRow,
} from '../runtime/index.js';
import type { JobContext } from './job-context.js';
import { countDelivery } from './outbox-metrics.js';
import { updateOutboxGauges } from './outbox-gauges.js';

/** Claim rounds per kind per pass: a pass is bounded even under a large backlog. */
export const MAX_ROUNDS_PER_PASS = 10;
/** The longest a single attempt may take (less when the lease is short: see attemptTimeoutMs). */
export const MAX_ATTEMPT_MS = 15_000;
const LEASE_MARGIN_MS = 1000;

export interface DeliverySummary {
  claimed: number;
  delivered: number;
  failed: number;
  dead: number;
  released: number;
}

export function attemptTimeoutMs(policy: OutboxPolicy): number {
  return Math.max(500, Math.min(MAX_ATTEMPT_MS, Math.floor((policy.lease_seconds * 1000) / 2)));
}

/** deliver_outbox: one bounded pass over every kind, then the outbox gauges. */
export async function deliverOutbox(context: JobContext, options: { kinds?: readonly OutboxKind[] } = {}): Promise<Record<string, DeliverySummary>> {
  const kinds = options.kinds ?? OUTBOX_KINDS;
  const summaries = await Promise.all(kinds.map((kind) => deliverKind(context, kind)));
  await updateOutboxGauges(context);
  return Object.fromEntries(kinds.map((kind, i) => [kind, summaries[i]!]));
}

async function deliverKind(context: JobContext, kind: OutboxKind): Promise<DeliverySummary> {
  const policy = context.services.loaded.outbox[kind];
  const timeoutMs = attemptTimeoutMs(policy);
  const summary: DeliverySummary = { claimed: 0, delivered: 0, failed: 0, dead: 0, released: 0 };
  for (let round = 0; round < MAX_ROUNDS_PER_PASS; round++) {
    // Measured before the claim statement, so the local deadline is never later than the
    // lease the database stamps (now() + lease_seconds at its own clock).
    const claimedAt = Date.now();
    const claim = await claimOutboxBatch(context.services.pool, { kind, batch: policy.batch, lease_seconds: policy.lease_seconds });
    summary.claimed += claim.rows.length;
    // Invariant: an attempt starts only if its timeout ends before the lease does, so no
    // other replica can claim a row while this one may still be sending it.
    const startBy = claimedAt + policy.lease_seconds * 1000 - timeoutMs - LEASE_MARGIN_MS;
    await forEachLimited(claim.rows, policy.parallel, (row) => attempt(context, policy, row, claim.token, { startBy, timeoutMs }, summary));
    if (claim.rows.length < policy.batch) break;
  }
  return summary;
}

async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

async function runHandler(context: JobContext, policy: OutboxPolicy, row: OutboxRow, timeoutMs: number): Promise<DeliveryOutcome> {
  const signal = AbortSignal.timeout(timeoutMs);
  const handler = context.handlers[row.kind];
  // The race bounds handlers that ignore the signal: the attempt ends as failed on time.
  const timedOut = new Promise<DeliveryOutcome>((resolve) => signal.addEventListener('abort', () => resolve({ type: 'failed', error: `timed out after ${timeoutMs} ms` }), { once: true }));
  try {
    return await Promise.race([handler(row, { services: context.services, policy, signal, timeoutMs }), timedOut]);
  } catch (error) {
    return { type: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
}

async function attempt(context: JobContext, policy: OutboxPolicy, row: OutboxRow, token: string, bounds: { startBy: number; timeoutMs: number }, summary: DeliverySummary): Promise<void> {
  const { pool, logger } = context.services;
  if (Date.now() > bounds.startBy) {
    await releaseOutboxClaim(pool, row.id, token);
    summary.released++;
    return;
  }
  const outcome = await runHandler(context, policy, row, bounds.timeoutMs);
  const log = { outbox_id: row.id, kind: row.kind, workspace_id: row.workspace_id, subscription_id: row.subscription_id, attempt: row.attempts };
  if (outcome.type === 'delivered') {
    await markOutboxDelivered(pool, row.id, token, { status_code: outcome.status_code ?? null, response: outcome.response ?? null });
    summary.delivered++;
    countDelivery(context.metrics, row.kind, 'delivered');
    logger.info({ ...log, status_code: outcome.status_code }, 'delivery succeeded');
    return;
  }
  const state = await markOutboxFailed(pool, row.id, token, {
    status_code: outcome.status_code ?? null,
    response: outcome.response ?? null,
    error: outcome.error.slice(0, 1000),
    max_attempts: policy.max_attempts,
    retry_seconds: retryDelaySeconds(row.attempts),
  });
  const dead = state === 'dead';
  summary[dead ? 'dead' : 'failed']++;
  countDelivery(context.metrics, row.kind, dead ? 'dead' : 'failed');
  logger.warn({ ...log, status_code: outcome.status_code, error: outcome.error, dead }, dead ? 'delivery failed for the last time; marked dead' : 'delivery failed; will retry');
}
