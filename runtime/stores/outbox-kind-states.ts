import type { OutboxKind } from '../config/index.js';
import type { Queryable } from '../db/index.js';

// Per-kind outbox state shared by all control replicas (table outbox_kind_states).

/**
 * Records whether the kind's backlog condition holds now and returns for how many seconds it
 * has held without a break (0 when it does not hold). Kept in the database, not in process
 * memory, because successive sender passes may run on different replicas.
 */
export async function trackOutboxBacklog(db: Queryable, kind: OutboxKind, holds: boolean): Promise<number> {
  const result = await db.query(
    `insert into outbox_kind_states (kind, backlog_since) values ($1, case when $2 then now() end)
     on conflict (kind) do update set backlog_since = case when $2 then coalesce(outbox_kind_states.backlog_since, now()) end
     returning coalesce(extract(epoch from now() - backlog_since), 0)::float8 as held_seconds`,
    [kind, holds],
  );
  return holds ? Number(result.rows[0]?.held_seconds ?? 0) : 0;
}

/**
 * Takes the kind's purge turn when its purge_interval_seconds has passed since the last one.
 * Invariant: the conditional upsert succeeds for one caller per interval, whichever replica
 * asks, so the per-kind interval holds across replicas.
 */
export async function claimOutboxPurgeTurn(db: Queryable, kind: OutboxKind, intervalSeconds: number): Promise<boolean> {
  const result = await db.query(
    `insert into outbox_kind_states (kind, purged_at) values ($1, now())
     on conflict (kind) do update set purged_at = now()
      where outbox_kind_states.purged_at is null or outbox_kind_states.purged_at <= now() - make_interval(secs => $2)`,
    [kind, intervalSeconds],
  );
  return result.rowCount === 1;
}
