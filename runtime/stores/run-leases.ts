import type { Queryable } from '../db/index.js';
import { mapRun, type RunRow } from './runs.js';
import { HELD_WORKER_LOCKS_SQL, lostWorkerSql } from './worker-sessions.js';

// Attempt ownership and fencing (RUNS.md invariant 2). Claiming a run gives it a new
// current_attempt_id; every write the attempt's host makes afterwards carries
// `current_attempt_id = $attempt` in its WHERE clause. A write that matches no row means the
// lease was lost (expired and handed to another attempt, or the run was sealed): the host must
// abort the attempt at once and write nothing more.

/** A run a claim took, and whether its thread had steer entries pending in the claim's snapshot. */
export interface ClaimedRun {
  readonly run: RunRow;
  readonly steerPending: boolean;
}

/**
 * Claims up to `limit` accepted runs for this worker. FOR UPDATE SKIP LOCKED lets concurrent
 * workers claim disjoint runs without waiting on each other; each claim opens an attempt
 * (attempts + 1, a fresh attempt id that fences the previous attempt's writes) with a lease.
 * `steerPending`: a steer entry of the run's thread committed before the statement's snapshot;
 * one committed after it announces itself by a NOTIFY naming the run (the inbox notifies a
 * steer for an accepted run as for a running one), which the worker keeps until the run is
 * hosted (WorkerHost.noteEarlySteer) — so a run claimed without one needs no steer read.
 */
export async function claimRuns(db: Queryable, workerId: string, limit: number, leaseSeconds: number, attemptIdFor: () => string): Promise<ClaimedRun[]> {
  if (limit <= 0) return [];
  const ids = Array.from({ length: limit }, attemptIdFor);
  const result = await db.query(
    `with locked as (
       select id, created_at from runs where status = 'accepted' and cancel_requested_at is null
        order by created_at, id limit $2 for update skip locked
     ), candidates as (
       select id, row_number() over (order by created_at, id) as n from locked
     ), claimed as (
       update runs r set status = 'running', attempts = r.attempts + 1, current_attempt_id = ($4::text[])[c.n],
              lease_owner = $1, lease_expires_at = now() + make_interval(secs => $3),
              started_at = coalesce(r.started_at, now()), updated_at = now(), version = r.version + 1
         from candidates c where r.id = c.id returning r.*
     ), attempt_rows as (
       insert into run_attempts (id, run_id, number, worker_id) select current_attempt_id, id, attempts, $1 from claimed
     )
     select c.*, exists (select 1 from inbox_entries e where e.thread_id = c.thread_id and e.status = 'pending' and e.delivery = 'steer') as steer_pending
       from claimed c`,
    [workerId, limit, leaseSeconds, ids],
  );
  return result.rows.map(({ steer_pending, ...row }) => ({ run: mapRun(row), steerPending: steer_pending === true }));
}

/**
 * Heartbeat: extends the lease while this attempt still owns the run. 'lost' = the lease is
 * gone (stop writing at once); 'cancel' = owned, but a cancel was requested (a fallback for a
 * missed NOTIFY).
 */
export async function renewLease(db: Queryable, runId: string, attemptId: string, leaseSeconds: number): Promise<'owned' | 'cancel' | 'lost'> {
  const result = await db.query<{ cancel: boolean }>(
    `update runs set lease_expires_at = now() + make_interval(secs => $3) where id = $1 and current_attempt_id = $2 and status = 'running'
     returning cancel_requested_at is not null as cancel`,
    [runId, attemptId, leaseSeconds],
  );
  const row = result.rows[0];
  return !row ? 'lost' : row.cancel ? 'cancel' : 'owned';
}

/**
 * Whether the attempt still holds the run (RUNS.md invariant 2): the fence of a host request
 * that reads or writes on the attempt's behalf. A request that passed it may still race a
 * lease expiry; what it writes is then either keyed by the run (a later attempt overwrites it)
 * or inserted with the same `current_attempt_id` condition.
 */
export async function attemptHoldsRun(db: Queryable, runId: string, attemptId: string): Promise<boolean> {
  const result = await db.query(`select 1 from runs where id = $1 and current_attempt_id = $2 and status = 'running'`, [runId, attemptId]);
  return result.rowCount === 1;
}

/**
 * Moves the checkpoint pointer, next ordinal, usage and display position of a step in the
 * caller's transaction (the same one that inserts the step's items). Returns the replaced
 * checkpoint key (for cleanup through the outbox), 'committed' when this very step is already
 * committed (a retried commit), or undefined when fenced out.
 */
export async function commitStepPointer(
  db: Queryable,
  runId: string,
  attemptId: string,
  step: { checkpoint_seq: number; checkpoint_key: string; next_ordinal: number; usage: object },
): Promise<{ previous_key: string | null } | 'committed' | undefined> {
  // One statement (one round trip): the owned row is locked (held to the end of the step's
  // transaction) and read as it was, and the pointer moves only when this step is newer.
  const result = await db.query<{ checkpoint_key: string | null; checkpoint_seq: number; moved: boolean }>(
    `with owned as (
       select checkpoint_key, checkpoint_seq from runs where id = $1 and current_attempt_id = $6 and status = 'running' for update
     ), moved as (
       update runs set checkpoint_seq = $2, checkpoint_key = $3, next_ordinal = $4::int, usage = $5, display_position = ($4::int)::text,
              updated_at = now(), version = version + 1
         from owned where runs.id = $1 and owned.checkpoint_seq < $2
       returning 1
     )
     select owned.checkpoint_key, owned.checkpoint_seq, exists (select 1 from moved) as moved from owned`,
    [runId, step.checkpoint_seq, step.checkpoint_key, step.next_ordinal, JSON.stringify(step.usage), attemptId],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  if (row.moved) return { previous_key: row.checkpoint_key };
  // Idempotent retry: a commit whose acknowledgement was lost with the database connection
  // finds its own pointer already in place (same sequence, same object): nothing to redo.
  if (row.checkpoint_seq === step.checkpoint_seq && row.checkpoint_key === step.checkpoint_key) return 'committed';
  return undefined;
}

/**
 * The last step of a run that ends (completed, failed, cancelled), in its seal's transaction:
 * the fence of that step — the owned row locked (to the end of the transaction, so the seal after
 * it cannot miss) while this attempt holds the run — and the checkpoint key it points to, for its
 * release in the same transaction. The step's columns (next ordinal, display position, the
 * pointer cleared: an ended run is never continued, so no checkpoint is stored) are written by
 * the seal's own update (SealChange.ending_step): one new version of the run's row, not two.
 * Undefined when fenced out.
 */
export async function lockEndingStep(db: Queryable, runId: string, attemptId: string): Promise<{ previous_key: string | null } | undefined> {
  const result = await db.query<{ checkpoint_key: string | null }>(
    `select checkpoint_key from runs where id = $1 and current_attempt_id = $2 and status = 'running' for update`,
    [runId, attemptId],
  );
  const row = result.rows[0];
  return row ? { previous_key: row.checkpoint_key } : undefined;
}

export interface SealChange {
  status: 'completed' | 'failed' | 'cancelled' | 'waiting';
  output?: unknown;
  failure?: { code: string; message: string } | null;
  wait_reason?: string | null;
  pending?: object | null;
  usage: object;
  /**
   * The run's last step, committed with this seal (lockEndingStep fenced it): its next ordinal
   * and display position, and the checkpoint pointer cleared — set by the seal's update.
   */
  ending_step?: { next_ordinal: number };
}

/**
 * Seals a run exactly once (RUNS.md invariant 6): only a run not yet sealed changes, and —
 * when an attempt seals it — only while that attempt still owns it. usage_at_seal is recorded
 * here; the caller writes the outbox event in the same transaction.
 */
export async function sealRun(db: Queryable, runId: string, attemptId: string | null, change: SealChange, historyEnd?: number): Promise<RunRow | undefined> {
  // The attempt that held the run ends in the same statement as the seal: a process killed
  // right after the seal commits can no longer leave the attempt row open on a sealed run.
  // coalesce keeps an attempt that already ended (expired, or a waiting run's) as it was.
  const result = await db.query(SEAL_RUN_SQL, sealValues(runId, attemptId, change, historyEnd));
  return result.rows[0] ? mapRun(result.rows[0]) : undefined;
}

/**
 * The seal's two CTEs, `sealed` and `ended` ($1 run, $2 attempt or null, $3–$8 the change,
 * $9 the history's end, $10 the ending step's next ordinal or null): shared by sealRun,
 * sealReleasingThread (seal-release.ts) and sealInOneStatement (seal-one.ts, whose seal has a
 * condition `also`).
 */
export const sealCtes = (also?: string): string => `sealed as (
       update runs set status = $3, output = $4, failure = $5, wait_reason = $6, pending = $7, usage = $8, usage_at_seal = $8,
              sealed_at = coalesce(sealed_at, now()), updated_at = now(), version = version + 1, lease_owner = null, lease_expires_at = null,
              history_end = coalesce($9::int, history_end),
              next_ordinal = coalesce($10::int, next_ordinal),
              display_position = case when $10::int is null then display_position else ($10::int)::text end,
              checkpoint_key = case when $10::int is null then checkpoint_key end
        where id = $1 and ($2::text is null or current_attempt_id = $2)
          and ((sealed_at is null and status in ('accepted', 'running'))
               -- the one exception: a waiting run nobody resumed may be cancelled, freeing its thread
               or (status = 'waiting' and $3 = 'cancelled' and resumed_by_id is null))${also ? `
          and ${also}` : ''}
        returning *
     ), ended as (
       update run_attempts a set ended_at = coalesce(a.ended_at, now()), outcome = coalesce(a.outcome, s.status), charged = a.charged or s.status = 'failed'
         from sealed s where a.id = s.current_attempt_id and a.ended_at is null
     )`;
export const SEAL_CTES = sealCtes();

const SEAL_RUN_SQL = `with ${SEAL_CTES}
     select * from sealed`;

/** $1–$10 of SEAL_CTES. */
export function sealValues(runId: string, attemptId: string | null, change: SealChange, historyEnd?: number): unknown[] {
  return [runId, attemptId, change.status, change.output === undefined ? null : JSON.stringify(change.output), change.failure ? JSON.stringify(change.failure) : null, change.wait_reason ?? null, change.pending ? JSON.stringify(change.pending) : null, JSON.stringify(change.usage), historyEnd ?? null, change.ending_step?.next_ordinal ?? null];
}

/**
 * A drained attempt hands the run back uncharged: it is accepted again for any worker. The
 * attempt row ends (outcome handoff) in the same statement, so a crash cannot leave it open.
 */
export async function handOffRun(db: Queryable, runId: string, attemptId: string): Promise<boolean> {
  const result = await db.query(
    `with handed as (
       update runs set status = 'accepted', current_attempt_id = null, lease_owner = null, lease_expires_at = null, updated_at = now(), version = version + 1
        where id = $1 and current_attempt_id = $2 and status = 'running' returning id
     ), ended as (
       update run_attempts set ended_at = coalesce(ended_at, now()), outcome = coalesce(outcome, 'handoff')
        where id = $2 and exists (select 1 from handed)
     )
     select count(*)::int as n from handed`,
    [runId, attemptId],
  );
  return (result.rows[0] as { n: number } | undefined)?.n === 1;
}

/**
 * expire_leases backstop for attempt rows left open by a process killed between a run's seal
 * (or handoff) and the end of its attempt — possible with releases that ended the attempt in a
 * second statement. An open attempt is legitimate only as the current attempt of a running
 * run (claimRuns opens both in one statement; seal, handoff and expiry end it in the statement
 * that moves the run). Any other open row is closed: with the run's sealed status when it is
 * still the run's current attempt, else as a handoff (the only way a run moves on from an
 * attempt without ending it in the same statement). Bounded; SKIP LOCKED keeps replicas apart.
 */
export async function closeOrphanedAttempts(db: Queryable, limit: number): Promise<number> {
  const result = await db.query(
    `with orphaned as (
       select a.id, r.current_attempt_id = a.id as current, r.status
         from run_attempts a join runs r on r.id = a.run_id
        where a.ended_at is null and (r.current_attempt_id is distinct from a.id or r.sealed_at is not null)
        order by a.started_at limit $1
        for update of a skip locked
     )
     update run_attempts a set ended_at = now(),
            outcome = case when o.current then o.status else 'handoff' end,
            charged = a.charged or (o.current and o.status = 'failed')
       from orphaned o where a.id = o.id`,
    [limit],
  );
  return result.rowCount ?? 0;
}

export async function endAttempt(db: Queryable, attemptId: string, outcome: string, charged: boolean): Promise<void> {
  await db.query(`update run_attempts set ended_at = coalesce(ended_at, now()), outcome = coalesce(outcome, $2), charged = charged or $3 where id = $1`, [attemptId, outcome, charged]);
}

/**
 * expire_leases: runs whose lease passed — or whose lease owner's database session is gone
 * (a registered worker whose session lock nobody holds: its process died, see
 * worker-sessions.ts) — lose their attempt (charged). Below max_attempts they are accepted
 * again and continue from their last checkpoint; at max_attempts they are returned for the
 * caller to fail. Bounded per pass; SKIP LOCKED keeps replicas apart. A live but stalled owner
 * (SIGSTOP) still holds its session, so only its lease expiry takes the run from it
 * (RUNS.md invariant 2: the new attempt id fences whatever it writes when it wakes up).
 */
export async function expireLeases(db: Queryable, limit: number): Promise<{ requeued: RunRow[]; exhausted: RunRow[] }> {
  const result = await db.query(
    `with held_worker_locks as materialized (${HELD_WORKER_LOCKS_SQL}), expired as (
       select id, current_attempt_id from runs
        where status = 'running' and (lease_expires_at < now() or ${lostWorkerSql('lease_owner', 'held_worker_locks')})
        order by lease_expires_at limit $1 for update skip locked
     ), ended as (
       update run_attempts a set ended_at = now(), outcome = 'expired', charged = true from expired e where a.id = e.current_attempt_id
     )
     update runs r set charged_attempts = r.charged_attempts + 1,
            status = case when r.charged_attempts + 1 >= r.max_attempts then 'running' else 'accepted' end,
            current_attempt_id = case when r.charged_attempts + 1 >= r.max_attempts then r.current_attempt_id else null end,
            lease_owner = null, lease_expires_at = case when r.charged_attempts + 1 >= r.max_attempts then r.lease_expires_at else null end,
            updated_at = now(), version = r.version + 1
       from expired e where r.id = e.id returning r.*`,
    [limit],
  );
  const rows = result.rows.map(mapRun);
  return { requeued: rows.filter((r) => r.status === 'accepted'), exhausted: rows.filter((r) => r.status === 'running') };
}

/** Records a cancel request; returns the run as it is now (null when absent). */
export async function requestRunCancel(db: Queryable, runId: string): Promise<RunRow | null> {
  const result = await db.query(
    `update runs set cancel_requested_at = coalesce(cancel_requested_at, now()), updated_at = now(), version = version + 1
      where id = $1 and sealed_at is null returning *`,
    [runId],
  );
  return result.rows[0] ? mapRun(result.rows[0]) : null;
}

/**
 * Records the run's environments (spec 2.5 environment_mounts), fenced like every write of the
 * attempt's host: false when this attempt no longer holds the run.
 */
export async function setRunEnvironmentMounts(db: Queryable, runId: string, attemptId: string, mounts: readonly Record<string, unknown>[]): Promise<boolean> {
  const result = await db.query(
    `update runs set environment_mounts = $3, updated_at = now() where id = $1 and current_attempt_id = $2 and status = 'running'`,
    [runId, attemptId, JSON.stringify(mounts)],
  );
  return result.rowCount === 1;
}

/**
 * Records what the run's recall put into its context (continuation.memory_sources), fenced by
 * the attempt (RUNS.md invariant 2): an attempt that lost its lease writes nothing. Returns
 * false when fenced out.
 */
export async function setRunMemorySources(db: Queryable, runId: string, attemptId: string, sources: Record<string, unknown>): Promise<boolean> {
  const result = await db.query(
    `update runs set memory_sources = $3::jsonb, updated_at = now() where id = $1 and current_attempt_id = $2 and status = 'running'`,
    [runId, attemptId, JSON.stringify(sources)],
  );
  return result.rowCount === 1;
}
