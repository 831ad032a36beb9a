import type { OutboxKind, OutboxPolicy } from '../config/index.js';
import type { Services } from '../process/index.js';
import type { OutboxRow } from '../stores/index.js';

/** What one delivery attempt came to. The sender settles the row from it. */
export type DeliveryOutcome =
  | { readonly type: 'delivered'; readonly status_code?: number | null; readonly response?: string | null }
  | { readonly type: 'failed'; readonly error: string; readonly status_code?: number | null; readonly response?: string | null };

export interface DeliveryContext {
  readonly services: Services;
  readonly policy: OutboxPolicy;
  /** Aborts when the attempt runs past its time bound (always well inside the lease). */
  readonly signal: AbortSignal;
  /** Milliseconds the attempt may take. */
  readonly timeoutMs: number;
}

/**
 * Delivers one claimed row. Delivery is at least once: a handler may see a row again after
 * a crash or a lost lease, so it must tolerate repeats (webhook receivers dedupe on
 * webhook-id; deleting an object twice is harmless). Throwing counts as a failed attempt.
 */
export type OutboxHandler = (row: OutboxRow, context: DeliveryContext) => Promise<DeliveryOutcome>;

export type OutboxHandlers = Readonly<Record<OutboxKind, OutboxHandler>>;

/** The kinds whose handlers the run engine supplies (subagent results, memory purges). */
export const ENGINE_OUTBOX_KINDS = ['child_result', 'memory_purge'] as const;
export type EngineOutboxKind = (typeof ENGINE_OUTBOX_KINDS)[number];

/** A sweep pass supplied from outside jobs/ (the run engine's advance_threads, expire_leases). */
export type SweepHook = (services: Services) => Promise<void>;

/**
 * What the run engine plugs into the background work: the passes of its two sweeps (run in
 * order each interval; empty lists make the sweep a logged no-op) and the delivery handlers
 * of its outbox kinds (absent: the row is marked delivered with a log line).
 */
export interface EngineHooks {
  readonly advance_threads: readonly SweepHook[];
  readonly expire_leases: readonly SweepHook[];
  /**
   * The quick part of expire_leases (requeue the runs of workers whose database session is
   * gone), run every worker.liveness_scan_ms; absent: only the full pass does it.
   */
  readonly lost_workers?: readonly SweepHook[];
  readonly outbox: Readonly<Partial<Record<EngineOutboxKind, OutboxHandler>>>;
}
