import type { Queryable } from '../db/index.js';

// Worker liveness tied to a database session (the worker_sessions table and the advisory lock
// behind it). A worker host takes a session-level advisory lock keyed by its worker id on a
// dedicated connection (its LISTEN connection) before it claims anything, and registers the id
// here. PostgreSQL releases a session lock the moment the session ends: when the process is
// killed, the kernel closes its socket and the backend exits. So "registered, and nobody holds
// its lock" means "its process is gone", and expire_leases may requeue that worker's runs at
// once instead of waiting for their leases (RUNS.md invariant 2 still holds: the requeue gives
// the run a new attempt id, which fences whatever the old attempt might still write).
// A stalled process (SIGSTOP, a long GC pause, a partitioned host whose TCP connection is still
// open) keeps its session and its lock: only its lease expiry fences it.

/** Lock key of a worker id: 64 bits, so two live workers practically never share one. */
const LOCK_KEY_SQL = (idSql: string) => `hashtextextended('svc-worker:' || ${idSql}, 0)`;

/**
 * Takes this worker's session lock on `session` (a dedicated connection that lives as long as
 * the process) and registers the worker. False when another session holds the lock: in
 * practice this worker's own previous session that the server has not yet seen die (a network
 * blip); the caller retries on a new connection later and claims nothing meanwhile.
 */
export async function holdWorkerSession(session: Queryable, workerId: string): Promise<boolean> {
  const locked = await session.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK_KEY_SQL('$1')}) as locked`, [workerId]);
  if (!locked.rows[0]?.locked) return false;
  // Registered after the lock: a registered id whose lock is free is a dead (or reconnecting) one.
  await session.query(`insert into worker_sessions (worker_id) values ($1) on conflict (worker_id) do nothing`, [workerId]);
  return true;
}

/**
 * A materialized CTE body (name it, e.g. `held_worker_locks as materialized (…)`) listing the
 * lock keys of live worker sessions in this database: pg_locks is read once per statement, not
 * once per run row.
 */
export const HELD_WORKER_LOCKS_SQL = `select (l.classid::bigint << 32) | l.objid::bigint as key from pg_locks l
   where l.locktype = 'advisory' and l.objsubid = 1 and l.granted
     and l.database = (select oid from pg_database where datname = current_database())`;

/**
 * Condition on a lease owner column: the owner registered a session and no session holds its
 * lock any more. `heldCte` names a CTE built from HELD_WORKER_LOCKS_SQL.
 */
export function lostWorkerSql(ownerColumn: string, heldCte: string): string {
  return `(${ownerColumn} in (select worker_id from worker_sessions)
     and ${LOCK_KEY_SQL(ownerColumn)} not in (select key from ${heldCte}))`;
}

/**
 * Forgets registrations of workers that are gone and own no running run any more (their runs
 * were requeued). Bounded; a live worker that lost its connection re-registers on reconnect.
 */
export async function forgetLostWorkerSessions(db: Queryable, limit: number): Promise<number> {
  const result = await db.query(
    `with held as materialized (${HELD_WORKER_LOCKS_SQL}), gone as (
       select w.worker_id from worker_sessions w
        where ${LOCK_KEY_SQL('w.worker_id')} not in (select key from held)
          and not exists (select 1 from runs r where r.status = 'running' and r.lease_owner = w.worker_id)
        limit $1 for update of w skip locked
     )
     delete from worker_sessions w using gone g where w.worker_id = g.worker_id`,
    [limit],
  );
  return result.rowCount ?? 0;
}
