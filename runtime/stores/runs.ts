import { toIso, type Queryable } from '../db/index.js';

export type RunStatus = 'accepted' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export const SEALED_STATUSES: readonly RunStatus[] = ['waiting', 'completed', 'failed', 'cancelled'];

export interface RunRow {
  id: string;
  workspace_id: string;
  session_id: string;
  thread_id: string;
  agent_id: string;
  agent_revision_id: string;
  revision_selection: string;
  status: RunStatus;
  wait_reason: string | null;
  trigger: string;
  lineage: string;
  parent_run_id: string | null;
  source_entry_id: string | null;
  principal_id: string | null;
  resumed_by_id: string | null;
  attempts: number;
  charged_attempts: number;
  max_attempts: number;
  current_attempt_id: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  created_at: string;
  started_at: string | null;
  sealed_at: string | null;
  cancel_requested_at: string | null;
  updated_at: string;
  display_position: string;
  labels: Record<string, string>;
  input: Record<string, unknown>;
  output: unknown;
  failure: { code: string; message: string } | null;
  environment_mounts: unknown[];
  memory_mounts: unknown[];
  /** What recall put into the run's context, by inbox entry (continuation.memory_sources, spec 2.8). */
  memory_sources: Record<string, unknown>;
  options: Record<string, unknown>;
  config: Record<string, unknown>;
  pending: { approvals: unknown[]; calls: unknown[] } | null;
  resume: Record<string, unknown> | null;
  usage: { requests: number; input_tokens: number; output_tokens: number };
  usage_at_seal: Record<string, unknown> | null;
  checkpoint_seq: number;
  checkpoint_key: string | null;
  next_ordinal: number;
  history_start: number;
  history_end: number | null;
  version: number;
}

export const mapRun = (row: Record<string, unknown>): RunRow => {
  const out = { ...row } as Record<string, unknown>;
  for (const key of ['created_at', 'started_at', 'sealed_at', 'cancel_requested_at', 'updated_at', 'lease_expires_at']) out[key] = toIso(row[key]);
  return out as unknown as RunRow;
};

const INTERNAL = ['memory_sources', 'charged_attempts', 'lease_owner', 'lease_expires_at', 'config', 'usage', 'checkpoint_seq', 'checkpoint_key', 'next_ordinal', 'history_start', 'history_end'] as const;

/** The API view of a run (spec 2.5): internal bookkeeping (lease, checkpoint pointer) is left out. */
export function runView(run: RunRow): Record<string, unknown> {
  const view: Record<string, unknown> = { ...run };
  for (const key of INTERNAL) delete view[key];
  view.pending = run.pending ?? { approvals: [], calls: [] };
  return view;
}

/** A claim taken by the transaction that accepts the run (see insertRun). */
export interface RunClaim {
  readonly workerId: string;
  readonly attemptId: string;
  readonly leaseSeconds: number;
}

export async function insertRun(
  db: Queryable,
  row: Pick<RunRow, 'id' | 'workspace_id' | 'session_id' | 'thread_id' | 'agent_id' | 'agent_revision_id' | 'revision_selection' | 'trigger' | 'lineage' | 'parent_run_id' | 'source_entry_id' | 'principal_id' | 'max_attempts' | 'labels' | 'input' | 'options' | 'config' | 'resume'> & {
    checkpoint_key?: string | null;
    checkpoint_seq?: number;
    next_ordinal?: number;
    memory_mounts?: unknown[];
    memory_sources?: Record<string, unknown>;
  },
  /** A NOTIFY channel told the run id in the same statement (delivered when the transaction commits). */
  notifyChannel?: string,
  /**
   * Claimed by the inserting transaction (a free slot of its process's worker: RunClaim): the run is
   * inserted running, attempt 1 open and leased to the worker, exactly as claimRuns would leave
   * it, so the claim commits with the acceptance and is fenced by the same attempt id and lease.
   */
  claim?: RunClaim | null,
): Promise<RunRow> {
  // The inbox POST inserts its runs with enqueueOnThread (enqueue-input.ts), from the locked
  // thread row: a column or a claim rule changed here changes there too.
  const result = await db.query(
    `with inserted as (insert into runs (id, workspace_id, session_id, thread_id, agent_id, agent_revision_id, revision_selection, status, trigger, lineage,
       parent_run_id, source_entry_id, principal_id, max_attempts, labels, input, options, config, resume, checkpoint_key, checkpoint_seq, next_ordinal,
       memory_mounts, memory_sources, history_start, attempts, current_attempt_id, lease_owner, lease_expires_at, started_at)
     values ($1, $2, $3, $4, $5, $6, $7, case when $25::text is null then 'accepted' else 'running' end, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $23, $24,
       (select message_count from threads where id = $4),
       case when $25::text is null then 0 else 1 end, $25, $26, case when $25::text is null then null else now() + make_interval(secs => $27) end,
       case when $25::text is null then null else now() end) returning *
     ), attempt_row as (
       insert into run_attempts (id, run_id, number, worker_id) select current_attempt_id, id, attempts, lease_owner from inserted where $25::text is not null
     )
     select inserted.* from inserted
       left join lateral (select pg_notify($22, inserted.id) where $22::text is not null) notified on true`,
    [
      row.id, row.workspace_id, row.session_id, row.thread_id, row.agent_id, row.agent_revision_id, row.revision_selection, row.trigger, row.lineage,
      row.parent_run_id, row.source_entry_id, row.principal_id, row.max_attempts, JSON.stringify(row.labels), JSON.stringify(row.input),
      JSON.stringify(row.options), JSON.stringify(row.config), row.resume === null ? null : JSON.stringify(row.resume),
      row.checkpoint_key ?? null, row.checkpoint_seq ?? 0, row.next_ordinal ?? 1, notifyChannel ?? null,
      JSON.stringify(row.memory_mounts ?? []), JSON.stringify(row.memory_sources ?? {}),
      claim?.attemptId ?? null, claim?.workerId ?? null, claim?.leaseSeconds ?? 0,
    ],
  );
  return mapRun(result.rows[0]);
}

export async function getRun(db: Queryable, workspaceId: string, id: string): Promise<RunRow | null> {
  const result = await db.query(`select * from runs where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapRun(result.rows[0]) : null;
}

export async function getRunById(db: Queryable, id: string): Promise<RunRow | null> {
  const result = await db.query(`select * from runs where id = $1`, [id]);
  return result.rows[0] ? mapRun(result.rows[0]) : null;
}

export async function listRuns(db: Queryable, workspaceId: string, filter: { thread_id?: string | undefined; status?: string | undefined; after?: string | undefined; limit: number }): Promise<RunRow[]> {
  const result = await db.query(
    `select * from runs where workspace_id = $1 and ($2::text is null or thread_id = $2) and ($3::text is null or status = $3)
        and ($4::text is null or id > $4) order by id limit $5`,
    [workspaceId, filter.thread_id ?? null, filter.status ?? null, filter.after ?? null, filter.limit],
  );
  return result.rows.map(mapRun);
}

/** Optimistic labels update (PATCH /runs/{id}): null when the version moved on. */
export async function updateRunLabels(db: Queryable, workspaceId: string, id: string, version: number, labels: Record<string, string>): Promise<RunRow | null> {
  const result = await db.query(
    `update runs set labels = $4, version = version + 1, updated_at = now() where workspace_id = $1 and id = $2 and version = $3 returning *`,
    [workspaceId, id, version, JSON.stringify(labels)],
  );
  return result.rows[0] ? mapRun(result.rows[0]) : null;
}

/**
 * The run and its ancestors, nearest first (spec 4 row 6): parent_run_id links resumes to the
 * waiting run and forks to their origin run, so one walk crosses fork origins. `skip` pages.
 */
export async function runLineage(db: Queryable, workspaceId: string, runId: string, skip: number, limit: number): Promise<RunRow[]> {
  const result = await db.query(
    `with recursive chain as (
       select r.*, 0 as depth from runs r where r.workspace_id = $1 and r.id = $2
       union all
       select p.*, c.depth + 1 from runs p join chain c on p.id = c.parent_run_id and p.workspace_id = c.workspace_id where c.depth < 10000
     ) select * from chain order by depth offset $3 limit $4`,
    [workspaceId, runId, skip, limit],
  );
  return result.rows.map(mapRun);
}

/** Links a waiting run to its successor, at most once (RUNS.md invariant 7). */
export async function setResumedBy(db: Queryable, runId: string, successorId: string): Promise<boolean> {
  const result = await db.query(
    `update runs set resumed_by_id = $2, updated_at = now(), version = version + 1 where id = $1 and status = 'waiting' and resumed_by_id is null`,
    [runId, successorId],
  );
  return result.rowCount === 1;
}

/**
 * The traces an analysis may read: sealed runs of the agent, newest first, created within the
 * window, `limit` of them (callers ask one more to learn whether the selection was truncated).
 * A read of the runs table kept here because it exists only for trace selection; it uses the
 * runs store's row mapper and the runs_agent_created_idx index of migration 0006.
 */
export async function selectTraceRuns(
  db: Queryable,
  workspaceId: string,
  filter: { agent_id: string; run_id?: string | null; started_after?: string | null; started_before?: string | null; limit: number },
): Promise<RunRow[]> {
  const result = await db.query(
    `select * from runs where workspace_id = $1 and agent_id = $2 and status = any($3::text[])
        and ($4::text is null or id = $4) and ($5::timestamptz is null or created_at > $5) and ($6::timestamptz is null or created_at < $6)
      order by created_at desc, id desc limit $7`,
    [workspaceId, filter.agent_id, SEALED_STATUSES, filter.run_id ?? null, filter.started_after ?? null, filter.started_before ?? null, filter.limit],
  );
  return result.rows.map(mapRun);
}

/** The run row, locked until the caller's transaction ends (operator conversions). */
export async function lockRunById(tx: Queryable, id: string): Promise<RunRow | null> {
  const result = await tx.query(`select * from runs where id = $1 for update`, [id]);
  return result.rows[0] ? mapRun(result.rows[0]) : null;
}

/**
 * Moves the checkpoint pointer from `from` to `to` only while it still points at `from`
 * (compare-and-set); false when it moved meanwhile. Not an attempt's write: the caller holds
 * the row lock of a run no attempt executes (migrate-run-objects, with replicas stopped).
 */
export async function replaceCheckpointKey(tx: Queryable, id: string, from: string, to: string): Promise<boolean> {
  const result = await tx.query(`update runs set checkpoint_key = $3 where id = $1 and checkpoint_key = $2`, [id, from, to]);
  return (result.rowCount ?? 0) === 1;
}

/**
 * Which of these threads have an accepted or running run (at most one each, RUNS.md invariant
 * 1; served by the runs_one_active_per_thread partial index). Their environments are in use.
 */
export async function threadsWithActiveRun(db: Queryable, threadIds: readonly string[]): Promise<Set<string>> {
  if (threadIds.length === 0) return new Set();
  const result = await db.query<{ thread_id: string }>(`select thread_id from runs where thread_id = any($1::text[]) and status in ('accepted', 'running')`, [threadIds]);
  return new Set(result.rows.map((r) => r.thread_id));
}
