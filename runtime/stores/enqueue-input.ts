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
   * Called once the statement carrying this input has been written to PostgreSQL's socket
   * (EnqueueBatcher; possibly again if a shared statement failed and the input ran alone): what
   * should start then and not before, so as never to delay the statement (the input's
   * speculative attempt).
   */
  sent?: (() => void) | undefined;
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
  const result = await db.query<EnqueueRow>(
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
  return enqueueOutcome(input, result.rows[0]);
}

/**
 * Several inbox POSTs' statements as ONE statement (one round trip, one commit): what
 * ENQUEUE_SQL does for one input, for each row of the arrays — at most one input per thread
 * (EnqueueBatcher keeps a thread's inputs in separate batches; UPDATE … FROM would apply only
 * one of two rows matching the same thread). Each input's gate is its own (its key's try-lock,
 * g; its record, x): a refused input writes nothing, the others are made. The statement either
 * commits every input it made or none (any error aborts it whole: on an error PostgreSQL answers,
 * the batcher then runs each input alone, with ENQUEUE_SQL, so a batch answers exactly as its
 * inputs one by one would; StatementBatcher).
 * Rows are joined back to their input by the ids the input chose (thread, entry, run), never
 * by position. The invariants of ENQUEUE_SQL hold per input: positions and the current run are
 * taken under each thread's row lock by the UPDATE; the entry, run and attempt are inserted
 * from the locked row; the record commits with the effect; NOTIFYs only on commit. Row locks
 * of one batch are taken in the inputs' order by the UPDATE's nested loop over them (EnqueueBatcher
 * sends them in thread order), which PostgreSQL does not promise: should two processes' batches
 * ever lock the same threads in opposite orders, the deadlock is detected and one statement
 * aborted (40P01: its inputs then run alone).
 */
const ENQUEUE_BATCH_SQL = `with i as (
       select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
         $11::text[], $12::text[], $13::text[], $14::int[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::float8[], $21::int[],
         $22::text[], $23::text[], $24::text[], $25::text[], $26::text[], $27::text[], $28::text[], $29::float8[], $30::int[]) with ordinality
       as i(i_ws, i_thread, i_entry, i_kind, i_delivery, i_payload, i_options, i_agent, i_agent_rev, i_principal, i_request_key, i_run, i_run_rev,
         i_max_attempts, i_labels, i_config, i_mounts, i_attempt, i_worker, i_lease, i_known, i_lock, i_kws, i_kprincipal, i_kmethod, i_kroute, i_key,
         i_fingerprint, i_retention, i_status, i_ord)
     ), g as (
       select i_thread as g_thread, case when i_lock is null then true else pg_try_advisory_xact_lock(hashtextextended(i_lock, 0)) end as locked from i
     ), x as (
       select i.i_thread as x_thread, k.fingerprint, k.state, k.locked_until < now() as stale, k.status_code, k.response_body
       from i join idempotency_keys k on k.workspace_id = i.i_kws and k.principal_id = i.i_kprincipal and k.method = i.i_kmethod and k.route = i.i_kroute and k.key = i.i_key
       where i.i_lock is not null
     ), tu as (
       update threads set next_position = next_position + 1,
         current_run_id = coalesce(current_run_id, i.i_run),
         updated_at = case when current_run_id is null then now() else updated_at end,
         version = case when current_run_id is null then version + 1 else version end
       from i join g on g.g_thread = i.i_thread
       -- id = any(…): the rows are found by the primary key whatever the planner thinks of unnest's row count
       where threads.id = any($2::text[]) and threads.workspace_id = i.i_ws and threads.id = i.i_thread and g.locked and not exists (select 1 from x where x.x_thread = i.i_thread)
       returning ${STATE_COLUMNS}, current_run_id = i.i_run as started, case when message_count > 0 and message_count <> i.i_known then message_history end as history
     ), t as (
       select ${STATE_COLUMNS} from tu
     ), e as (
       insert into inbox_entries (id, workspace_id, thread_id, kind, delivery, status, position, payload, options, agent_id, agent_revision_id, principal_id, origin_run_id, request_key, assigned_run_id, child_run_id)
       select i.i_entry, i.i_ws, tu.id, i.i_kind, i.i_delivery, case when tu.started then 'assigned' else 'pending' end, tu.next_position - 1, i.i_payload::jsonb, i.i_options::jsonb,
         i.i_agent, i.i_agent_rev, i.i_principal, null, i.i_request_key, case when tu.started then i.i_run end, null
       from tu join i on i.i_thread = tu.id returning *
     ), r as (
       insert into runs (id, workspace_id, session_id, thread_id, agent_id, agent_revision_id, revision_selection, status, trigger, lineage,
         parent_run_id, source_entry_id, principal_id, max_attempts, labels, input, options, config, resume, checkpoint_key, checkpoint_seq, next_ordinal,
         memory_mounts, memory_sources, history_start, attempts, current_attempt_id, lease_owner, lease_expires_at, started_at)
       select i.i_run, i.i_ws, tu.session_id, tu.id, i.i_agent, i.i_run_rev, case when i.i_agent_rev is null then 'default' else 'pinned' end,
         case when i.i_attempt is null then 'accepted' else 'running' end, 'input', 'root', null, i.i_entry, i.i_principal, i.i_max_attempts, i.i_labels::jsonb, i.i_payload::jsonb, i.i_options::jsonb,
         i.i_config::jsonb, null, null, 0, 1, i.i_mounts::jsonb, '{}'::jsonb, tu.message_count, case when i.i_attempt is null then 0 else 1 end, i.i_attempt, i.i_worker,
         case when i.i_attempt is null then null else now() + make_interval(secs => i.i_lease) end, case when i.i_attempt is null then null else now() end
       from tu join i on i.i_thread = tu.id where tu.started returning *
     ), a as (
       insert into run_attempts (id, run_id, number, worker_id) select current_attempt_id, id, attempts, lease_owner from r where current_attempt_id is not null
     ), k as (
       insert into idempotency_keys (workspace_id, principal_id, method, route, key, fingerprint, state, status_code, response_body, expires_at)
       select i.i_kws, i.i_kprincipal, i.i_kmethod, i.i_kroute, i.i_key, i.i_fingerprint, 'completed', i.i_status,
         json_build_object('${STORED_ROWS}', json_build_object('thread', row_to_json(t), 'entry', row_to_json(e), 'run', row_to_json(r)))::text,
         now() + make_interval(secs => i.i_retention)
       from i join t on t.id = i.i_thread join e on e.id = i.i_entry left join r on r.id = i.i_run where i.i_lock is not null
     )
     select g.locked as key_locked,
       (select row_to_json(xr) from (select fingerprint, state, stale, status_code, response_body from x where x.x_thread = i.i_thread) xr) as key_existing,
       case when t.id is null then null else row_to_json(t) end as thread,
       ${historyAfterSql('tu.history', 't.message_count', 'i.i_known')} as history,
       case when e.id is null then null else row_to_json(e) end as entry, case when r.id is null then null else row_to_json(r) end as run
     from i join g on g.g_thread = i.i_thread left join t on t.id = i.i_thread left join tu on tu.id = i.i_thread
       left join e on e.id = i.i_entry left join r on r.id = i.i_run
       left join lateral (select pg_notify($31::text, r.id) where i.i_attempt is null and r.id is not null and $31::text is not null) accepted on true
       left join lateral (
         select pg_notify($32::text, cr.id) from runs cr
         where not tu.started and i.i_delivery = 'steer' and cr.id = t.current_run_id and cr.status in ('accepted', 'running')
       ) steered on true
     order by i.i_ord`;

type EnqueueRow = { key_locked: boolean; key_existing: IdempotencyRecordFound | null; thread: Record<string, unknown> | null; history: string | null; entry: Record<string, unknown> | null; run: Record<string, unknown> | null };

/** One input's answer from its row of either statement. */
function enqueueOutcome(input: EnqueueStatementInput, row: EnqueueRow | undefined): EnqueuedInput | EnqueueKeyRefused | null {
  if (!row) throw new Error('the inbox statement returned no row');
  if (!row.key_locked || row.key_existing) return { refused: { locked: row.key_locked, existing: row.key_existing } };
  if (!row.thread || !row.entry) return null;
  const thread = mapThreadState(row.thread);
  return { thread, history: historyAfter(input.history_prefix, row.history, thread.message_count), entry: mapEntry(row.entry), run: row.run ? mapRun(row.run) : null };
}

/**
 * Several inputs (each with its own key, or none; each on a different thread, all with the same
 * NOTIFY channels) in ONE statement, as enqueueOnThread does for one: an answer per input, in
 * their order. Any error aborts the whole statement (nothing is written) and is thrown.
 */
export async function enqueueOnThreads(db: Queryable, inputs: readonly EnqueueStatementInput[]): Promise<Array<EnqueuedInput | EnqueueKeyRefused | null>> {
  const first = inputs[0];
  if (!first) return [];
  const column = <T>(pick: (input: EnqueueStatementInput) => T): T[] => inputs.map(pick);
  const keyed = <T>(pick: (key: StatementKey) => T): Array<T | null> => inputs.map((input) => (input.key ? pick(input.key) : null));
  const result = await db.query<EnqueueRow>(ENQUEUE_BATCH_SQL, [
    column((v) => v.workspace_id), column((v) => v.thread_id), column((v) => v.entry_id), column((v) => v.kind), column((v) => v.delivery),
    column((v) => JSON.stringify(v.payload)), column((v) => JSON.stringify(v.options)), column((v) => v.agent_id), column((v) => v.agent_revision_id),
    column((v) => v.principal_id), column((v) => v.request_key), column((v) => v.run.id), column((v) => v.run.agent_revision_id), column((v) => v.run.max_attempts),
    column((v) => JSON.stringify(v.run.labels)), column((v) => JSON.stringify(v.run.config)), column((v) => JSON.stringify(v.run.memory_mounts)),
    column((v) => v.claim?.attemptId ?? null), column((v) => v.claim?.workerId ?? null), column((v) => v.claim?.leaseSeconds ?? 0), column((v) => v.history_prefix?.count ?? 0),
    keyed((k) => idempotencyLockKey(k.scope)), keyed((k) => k.scope.workspace_id), keyed((k) => k.scope.principal_id), keyed((k) => k.scope.method),
    keyed((k) => k.scope.route), keyed((k) => k.scope.key), keyed((k) => k.scope.fingerprint), keyed((k) => k.retentionSeconds), keyed((k) => k.responseStatus),
    first.accepted_channel, first.steer_channel,
  ]);
  if (result.rows.length !== inputs.length) throw new Error(`the inbox batch statement returned ${result.rows.length} rows for ${inputs.length} inputs`);
  return inputs.map((input, i) => enqueueOutcome(input, result.rows[i]));
}
