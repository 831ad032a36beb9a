import type { Queryable } from '../db/index.js';
import { mapEntry, type InboxEntry } from './inbox-entries.js';
import { historyAfter, type HistoryPrefix, type JsonArrayText } from '../http/index.js';
import { mapRun, type RunClaim, type RunRow } from './runs.js';
import { historyAfterSql, mapThreadState, STATE_COLUMNS, type ThreadState } from './threads.js';
import { idempotencyLockKey, type IdempotencyRecordFound, type StatementKey, type StatementKeyRefusal } from './idempotency-keys.js';

/** An inbox input, checked (agent, revision, media, mounts) before its transaction. */
export interface EnqueueStatementInput {
  workspace_id: string;
  thread_id: string;
  entry_id: string;
  kind: string;
  delivery: 'queue' | 'steer';
  payload: Record<string, unknown>;
  options: Record<string, unknown>;
  agent_id: string;
  /** The revision the input names (null: the agent's default). */
  agent_revision_id: string | null;
  principal_id: string;
  request_key: string | null;
  /** The run the input starts if the thread is idle, with what it is inserted with. */
  run: {
    id: string;
    agent_revision_id: string;
    max_attempts: number;
    labels: Record<string, string>;
    config: Record<string, unknown>;
    memory_mounts: unknown[];
  };
  /** NOTIFY channel told the run id when it is accepted for any worker (not claimed here). */
  accepted_channel: string;
  /** NOTIFY channel told the thread's current run id when a steer entry waits for it. */
  steer_channel: string;
  /** A slot of this process's worker: a started run is inserted running, leased to it. */
  claim: RunClaim | null;
  /** The thread's history as far as this process holds it (runtime/cache HistoryPrefixes):
   *  only the messages after it are read. */
  history_prefix?: HistoryPrefix | undefined;
  /**
   * The request's Idempotency-Key, recorded by this same statement (the folded claim in one
   * statement, run on its own as an implicit transaction): the effect is made only when the
   * key's advisory lock is taken and no record exists, and the record commits with it. Null:
   * the caller's transaction handles the key (or there is none).
   */
  key?: StatementKey | null | undefined;
}

export interface EnqueuedInput {
  entry: InboxEntry;
  /** The run the input started (the thread was idle), else null: the entry waits pending. */
  run: RunRow | null;
  /** The thread after the operation, without its history. */
  thread: ThreadState;
  /** The thread's history, read under the row lock (empty when it has none), as PostgreSQL's
   *  text: the response writes it as it is and an attempt started here parses it on its own thread. */
  history: JsonArrayText;
}

/** The key gate stayed closed: nothing was written (see EnqueueStatementInput.key). */
export interface EnqueueKeyRefused {
  refused: StatementKeyRefusal;
}

/** The stored response of a key recorded by enqueueOnThread: the rows the response was made of. */
export const STORED_ROWS = '$rows';

/** The statement's text, built once (a text built per call would be hashed and compared in full by the prepared-statement lookup, runtime/db/pool.ts). */
const ENQUEUE_SQL = `with g as (
       select case when $24::text is null then true else pg_try_advisory_xact_lock(hashtextextended($24::text, 0)) end as locked
     ), x as (
       select fingerprint, state, locked_until < now() as stale, status_code, response_body from idempotency_keys
       where $24::text is not null and workspace_id = $25::text and principal_id = $26::text and method = $27::text and route = $28::text and key = $29::text
     ), tu as (
       update threads set next_position = next_position + 1,
         current_run_id = coalesce(current_run_id, $12::text),
         updated_at = case when current_run_id is null then now() else updated_at end,
         version = case when current_run_id is null then version + 1 else version end
       where workspace_id = $1 and id = $2 and (select locked from g) and not exists (select 1 from x)
       returning ${STATE_COLUMNS}, current_run_id = $12::text as started, case when message_count > 0 and message_count <> $23::int then message_history end as history
     ), t as (
       -- The thread's row as the answer shows it: without its history (a JSON of the row would
       -- copy the whole history only to drop it) and without tu's own columns.
       select ${STATE_COLUMNS} from tu
     ), e as (
       insert into inbox_entries (id, workspace_id, thread_id, kind, delivery, status, position, payload, options, agent_id, agent_revision_id, principal_id, origin_run_id, request_key, assigned_run_id, child_run_id)
       select $3::text, $1::text, t.id, $4::text, $5::text, case when tu.started then 'assigned' else 'pending' end, t.next_position - 1, $6::jsonb, $7::jsonb,
         $8::text, $9::text, $10::text, null, $11::text, case when tu.started then $12::text end, null
       from t cross join tu returning *
     ), r as (
       insert into runs (id, workspace_id, session_id, thread_id, agent_id, agent_revision_id, revision_selection, status, trigger, lineage,
         parent_run_id, source_entry_id, principal_id, max_attempts, labels, input, options, config, resume, checkpoint_key, checkpoint_seq, next_ordinal,
         memory_mounts, memory_sources, history_start, attempts, current_attempt_id, lease_owner, lease_expires_at, started_at)
       select $12::text, $1::text, t.session_id, t.id, $8::text, $13::text, case when $9::text is null then 'default' else 'pinned' end,
         case when $19::text is null then 'accepted' else 'running' end, 'input', 'root', null, $3::text, $10::text, $14::int, $15::jsonb, $6::jsonb, $7::jsonb,
         $16::jsonb, null, null, 0, 1, $17::jsonb, '{}'::jsonb, t.message_count, case when $19::text is null then 0 else 1 end, $19::text, $20::text,
         case when $19::text is null then null else now() + make_interval(secs => $21::double precision) end, case when $19::text is null then null else now() end
       from t cross join tu where tu.started returning *
     ), a as (
       insert into run_attempts (id, run_id, number, worker_id) select current_attempt_id, id, attempts, lease_owner from r where $19::text is not null
     ), k as (
       insert into idempotency_keys (workspace_id, principal_id, method, route, key, fingerprint, state, status_code, response_body, expires_at)
       select $25::text, $26::text, $27::text, $28::text, $29::text, $30::text, 'completed', $32::int,
         -- json, not jsonb: the rows' text as it is, not parsed into jsonb to be printed again.
         json_build_object('${STORED_ROWS}', json_build_object('thread', row_to_json(t), 'entry', row_to_json(e), 'run', row_to_json(r)))::text,
         now() + make_interval(secs => $31::double precision)
       from t cross join e left join r on true where $24::text is not null
     )
     select (select locked from g) as key_locked,
       (select to_jsonb(x) from x) as key_existing,
       case when t.id is null then null else row_to_json(t) end as thread,
       ${historyAfterSql('tu.history', 't.message_count', '$23::int')} as history,
       case when e.id is null then null else row_to_json(e) end as entry, case when r.id is null then null else row_to_json(r) end as run
     from (select) one left join t on true left join tu on true left join e on true left join r on true
       left join lateral (select pg_notify($18::text, r.id) where $19::text is null and r.id is not null and $18::text is not null) accepted on true
       left join lateral (
         select pg_notify($22::text, cr.id) from runs cr
         where not tu.started and $5::text = 'steer' and cr.id = t.current_run_id and cr.status in ('accepted', 'running')
       ) steered on true`;

/**
 * The inbox POST's work on its thread in ONE statement — on its own with the Idempotency-Key
 * folded in (`input.key`), or pipelined after the BEGIN and the key's statements of the
 * transactional path: what lockThreadTakingPosition, insertEntry, insertRun and setThreadRuns
 * do one by one for the other thread operations.
 *
 * Invariants, each enforced here:
 * - The thread row is locked by the UPDATE, which takes the position (`next_position`) and, only
 *   if `current_run_id` is null in the row version it locked (READ COMMITTED re-reads a row
 *   changed since the snapshot before updating it), makes the new run current. Positions are
 *   therefore assigned under the row lock: gap-free, in commit order (RUNS.md invariant 1); and
 *   a thread has at most one current run (`started` is true only when the lock saw it idle).
 * - The entry is inserted at the taken position, born assigned to the run when one started,
 *   pending otherwise; the run and (claimed here) its attempt are inserted only when started,
 *   from the locked row (session, history length), so run, entry and thread always agree.
 * - The history returned is the locked row version's (RETURNING), never an older snapshot.
 * - NOTIFYs (accepted run; steer for the thread's current run) are delivered only if the
 *   transaction commits.
 * - With a key (`input.key`), the whole POST is this one statement, its own transaction: the
 *   key's transaction-level advisory lock is try-locked first (g; a twin holding it → refused,
 *   409, never a wait), then the record is looked up (x); the thread's UPDATE — and so every
 *   write after it, which all read t — happens only when the lock was taken and no record
 *   exists (a one-time filter, evaluated before any row is locked; lock order as in the
 *   transactional path: the key's lock, then the row). The completed record is inserted from
 *   the same rows (k: a plain INSERT). The lookup reads the statement's snapshot, taken before
 *   the lock: a twin that committed in between is not seen by x, but its record makes k's
 *   INSERT fail on the primary key (23505), which aborts the whole statement — exactly one
 *   effect per key either way. The record stores the rows (`{"$rows": …}`) the response is
 *   rendered from, as the response was (api/framework/idempotency.ts).
 * A thread missing from the workspace returns null and inserts nothing.
 */
export async function enqueueOnThread(db: Queryable, input: EnqueueStatementInput): Promise<EnqueuedInput | EnqueueKeyRefused | null> {
  const claim = input.claim;
  const key = input.key ?? null;
  const result = await db.query<{ key_locked: boolean; key_existing: IdempotencyRecordFound | null; thread: Record<string, unknown> | null; history: string | null; entry: Record<string, unknown> | null; run: Record<string, unknown> | null }>(
    ENQUEUE_SQL,
    [
      input.workspace_id, input.thread_id, input.entry_id, input.kind, input.delivery, JSON.stringify(input.payload), JSON.stringify(input.options),
      input.agent_id, input.agent_revision_id, input.principal_id, input.request_key, input.run.id,
      input.run.agent_revision_id, input.run.max_attempts, JSON.stringify(input.run.labels), JSON.stringify(input.run.config), JSON.stringify(input.run.memory_mounts),
      input.accepted_channel, claim?.attemptId ?? null, claim?.workerId ?? null, claim?.leaseSeconds ?? 0, input.steer_channel, input.history_prefix?.count ?? 0,
      key ? idempotencyLockKey(key.scope) : null, key?.scope.workspace_id ?? null, key?.scope.principal_id ?? null, key?.scope.method ?? null, key?.scope.route ?? null,
      key?.scope.key ?? null, key?.scope.fingerprint ?? null, key?.retentionSeconds ?? 0, key?.responseStatus ?? 0,
    ],
  );
  const row = result.rows[0];
  if (!row) throw new Error('the inbox statement returned no row');
  if (!row.key_locked || row.key_existing) return { refused: { locked: row.key_locked, existing: row.key_existing } };
  if (!row.thread || !row.entry) return null;
  const thread = mapThreadState(row.thread);
  return { thread, history: historyAfter(input.history_prefix, row.history, thread.message_count), entry: mapEntry(row.entry), run: row.run ? mapRun(row.run) : null };
}
