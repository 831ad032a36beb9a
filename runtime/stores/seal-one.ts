import type { Queryable } from '../db/index.js';
import { pgCode, PG_DEADLOCK_DETECTED } from '../errors/index.js';
import { mapEntry, type InboxEntry } from './inbox-entries.js';
import type { RunItem } from './run-items.js';
import { sealValues, type SealChange } from './run-leases.js';
import { releaseStatement } from './seal-release.js';
import { mapRun, type RunRow } from './runs.js';
import { mapThreadState, T_STATE_COLUMNS, type ThreadState } from './threads.js';

/** division_by_zero: raised by the statement's guard (a thread that moved between its snapshot and its update). */
const PG_DIVISION_BY_ZERO = '22012';

export interface OneStatementSeal {
  run: { id: string; workspace_id: string; source_entry_id: string | null; thread_id: string };
  attemptId: string;
  /** An ending status (completed, failed, cancelled). */
  change: SealChange;
  /** The thread's history length when the run started: only this run's seal appends to it while it is current. */
  historyStart: number;
  /** The run's messages, appended to the thread's history. */
  history: unknown[];
  /** Return the appended messages as PostgreSQL prints them (sealReleasingThread's printAppended). */
  printAppended: boolean;
  /** The run's last step's items, inserted with the seal (FinalStepCommit.items). */
  items?: readonly RunItem[] | undefined;
  /** SQL over the thread row `t`: true when a seal hook is concerned (the seal then takes its transaction). */
  concernedSql: string | null;
}

export type OneStatementOutcome =
  /** Not for this statement: something follows the release (a pending entry, a hook, a subagent thread) or the thread moved meanwhile. Nothing was written. */
  | { declined: true }
  /** Sealed, or undefined when fenced out (nothing written). */
  | { declined: false; sealed: { run: RunRow; entry: InboxEntry | null; thread: ThreadState; appendedText?: string } | undefined };

const texts = new Map<string, string>();

/**
 * The seal's statement for the one-statement path (texts cached: a prepared statement per
 * variant): releaseStatement's parameters ($1–$13, and $14–$15 when appending: seal-release.ts),
 * then the workspace, the history start and the items.
 */
function sqlFor(append: boolean, withItems: boolean, concernedSql: string | null): string {
  const key = `${append}|${withItems}|${concernedSql ?? ''}`;
  const cached = texts.get(key);
  if (cached) return cached;
  const workspace = append ? 16 : 14;
  const text = releaseStatement({
    append,
    itemsParam: withItems ? workspace + 2 : null,
    before: `snap as (
       select t.next_position from threads t
        where t.workspace_id = $${workspace} and t.id = $13 and t.current_run_id = $1 and t.message_count = $${workspace + 1}::int
          and t.origin is distinct from 'subagent'
          and not exists (select 1 from inbox_entries e where e.thread_id = t.id and e.status = 'pending')
          ${concernedSql ? `and not coalesce((${concernedSql}), false)` : ''}
     )`,
    sealAlso: 'exists (select 1 from snap)',
    freedAlso: 't.current_run_id = $1 and t.next_position = (select next_position from snap)',
    // Sealed but not released (an input took a position after the snapshot): the statement
    // fails whole, so its own transaction writes nothing, and the seal takes its transaction. A
    // division by the count of released threads in the WHERE clause — no constant the planner
    // could fold, evaluated for the row whatever reads the CTE — inside a CASE, so it is
    // evaluated only for a seal that matched (AND does not fix its operands' order).
    after: `guard as (
       select 1 as checked from (select 1) g
        where case when exists (select 1 from sealed) then 1 / (select count(*)::int from freed) else 1 end = 1
     )`,
    columns: '(select count(*) from snap)::int as eligible, (select count(*) from guard)::int as guarded',
    outer: true,
  });
  texts.set(key, text);
  return text;
}

/**
 * The common seal in ONE statement, its own transaction, one round trip: the seal (fenced by the
 * attempt), the last step's items, the source entry's finish and the thread's release with the
 * run's messages — when nothing follows the release: no pending entry, no seal hook concerned, not
 * a subagent thread. What the transaction path reads under the thread's lock first (round trip 1)
 * is checked here in the statement's snapshot, and the release is conditioned on the thread's
 * `next_position` being the snapshot's: an input is only ever added under the thread's lock and
 * takes a position, so an unchanged position means no entry came after the snapshot (READ
 * COMMITTED re-checks the condition on the row version the UPDATE finds). Every write is
 * conditioned on the seal, the seal on the snapshot's checks; a seal whose release then fails (an
 * input arrived in between) makes the statement fail whole (`guard`), and a deadlock aborts it
 * the same way: both answer `declined`, nothing written, and the caller seals in its transaction.
 * Lock order: the run's row, then the thread's (the POST, the other writer of a busy thread's
 * row, takes no lock on a running run's row).
 */
export async function sealInOneStatement(db: Queryable, seal: OneStatementSeal): Promise<OneStatementOutcome> {
  if (seal.change.status === 'waiting') throw new Error('a waiting run does not release its thread');
  const append = seal.history.length > 0;
  const withItems = seal.items !== undefined && seal.items.length > 0;
  const values = [
    ...sealValues(seal.run.id, seal.attemptId, seal.change, seal.historyStart + seal.history.length),
    seal.run.source_entry_id, seal.change.status === 'completed' ? 'completed' : 'failed', seal.run.thread_id,
  ];
  if (append) values.push(JSON.stringify(seal.history), seal.printAppended);
  values.push(seal.run.workspace_id, seal.historyStart);
  if (withItems) values.push(JSON.stringify(seal.items));
  let row: SealRow | undefined;
  try {
    row = (await db.query(sqlFor(append, withItems, seal.concernedSql), values)).rows[0];
  } catch (error) {
    const code = pgCode(error);
    if (code === PG_DIVISION_BY_ZERO || code === PG_DEADLOCK_DETECTED) return { declined: true };
    throw error;
  }
  return sealOutcome(seal, row);
}

/**
 * Several common seals in ONE statement (SealBatcher): what sqlFor's statement does for one seal,
 * for each row of the arrays — seals of different runs on different threads, all with the same
 * seal hooks' condition (`concernedSql`, SQL over the thread row `t`, no parameters). Per seal, as alone: the snapshot's checks (snap), the seal
 * fenced by its attempt and conditioned on them (sealed), its attempt ended, its items, its
 * entry finished and its thread released with its messages, on the same condition that the
 * thread's position is the snapshot's (freed). A seal whose snapshot check fails writes nothing
 * (declined, as alone) and one fenced out writes nothing (as alone), while the others are made.
 * A seal that matched but whose thread was not released (an input arrived in between) fails the
 * whole statement (guard: sealed and freed must count the same), as does any other error: then
 * nothing of it was written and, on an error PostgreSQL answers, each seal runs alone
 * (sealInOneStatement; StatementBatcher).
 * Lock order: the runs' rows, then the threads' rows, each in the seals' order (SealBatcher
 * sends them in thread order), as one seal alone locks its run's row, then its thread's.
 */
const batchTexts = new Map<string, string>();

const sealBatchSql = (concernedSql: string | null): string => `with i as (
       select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[],
         $11::text[], $12::text[], $13::text[], $14::text[], $15::bool[], $16::text[], $17::int[], $18::text[]) with ordinality
       as i(i_run, i_attempt, i_status, i_output, i_failure, i_wait, i_pending, i_usage, i_hend, i_next, i_entry, i_entry_status, i_thread, i_append,
         i_print, i_ws, i_hstart, i_items, i_ord)
     ), snap as (
       select i.i_run as snap_run, t.next_position as snap_position from i join threads t on t.id = i.i_thread
        where t.id = any($13::text[]) and t.workspace_id = i.i_ws and t.current_run_id = i.i_run and t.message_count = i.i_hstart
          and t.origin is distinct from 'subagent'
          and not exists (select 1 from inbox_entries e where e.thread_id = t.id and e.status = 'pending')
          ${concernedSql ? `and not coalesce((${concernedSql}), false)` : ''}
     ), sealed as (
       update runs set status = i.i_status, output = i.i_output::jsonb, failure = i.i_failure::jsonb, wait_reason = i.i_wait, pending = i.i_pending::jsonb,
              usage = i.i_usage::jsonb, usage_at_seal = i.i_usage::jsonb,
              sealed_at = coalesce(sealed_at, now()), updated_at = now(), version = version + 1, lease_owner = null, lease_expires_at = null,
              history_end = coalesce(i.i_hend, history_end),
              next_ordinal = coalesce(i.i_next, next_ordinal),
              display_position = case when i.i_next is null then display_position else (i.i_next)::text end,
              checkpoint_key = case when i.i_next is null then checkpoint_key end
         from i
        where runs.id = any($1::text[]) and runs.id = i.i_run and (i.i_attempt is null or current_attempt_id = i.i_attempt)
          and ((sealed_at is null and status in ('accepted', 'running'))
               or (status = 'waiting' and i.i_status = 'cancelled' and resumed_by_id is null))
          and exists (select 1 from snap where snap.snap_run = i.i_run)
        returning runs.*
     ), ended as (
       update run_attempts a set ended_at = coalesce(a.ended_at, now()), outcome = coalesce(a.outcome, s.status), charged = a.charged or s.status = 'failed'
         from sealed s where a.id = s.current_attempt_id and a.ended_at is null
     ), step_items as (
       insert into run_items (run_id, ordinal, id, kind, state, content, content_refs, first_stream_id, last_stream_id, started_at, ended_at)
       select i.i_run, x.ordinal, x.id, x.kind, x.state, x.content, x.content_refs, x.first_stream_id, x.last_stream_id, x.started_at, x.ended_at
         from i join sealed s on s.id = i.i_run
         cross join lateral jsonb_to_recordset(i.i_items::jsonb) as x(ordinal int, id text, kind text, state text, content jsonb, content_refs jsonb,
              first_stream_id text, last_stream_id text, started_at timestamptz, ended_at timestamptz)
        where i.i_items is not null
     ), finished as (
       update inbox_entries set version = version + 1, status = i.i_entry_status, failure = coalesce(i.i_failure::jsonb, failure), finished_at = coalesce(finished_at, now())
         from i
        where inbox_entries.id = any($11::text[]) and inbox_entries.id = i.i_entry and exists (select 1 from sealed s where s.id = i.i_run)
        returning inbox_entries.*
     ), freed as (
       update threads t set message_history = case when i.i_append is null then message_history else message_history || i.i_append::jsonb end,
              current_run_id = null, last_run_id = i.i_run, updated_at = now(), version = version + 1
         from i
        where t.id = any($13::text[]) and t.id = i.i_thread and exists (select 1 from sealed s where s.id = i.i_run)
          and t.current_run_id = i.i_run and t.next_position = (select snap_position from snap where snap.snap_run = i.i_run)
        returning ${T_STATE_COLUMNS}
     ), guard as (
       -- A division by a count, inside a CASE: nothing the planner could fold, evaluated only
       -- when some seal matched and its thread was not released (see sqlFor's guard).
       select 1 as checked from (select 1) g
        where case when (select count(*) from sealed) <> (select count(*) from freed) then 1 / (select count(*)::int * 0 from freed) else 1 end = 1
     )
     select (select count(*) from snap where snap.snap_run = i.i_run)::int as eligible, (select count(*) from guard)::int as guarded, s.*,
       (select to_jsonb(f) from finished f where f.id = i.i_entry) as released_entry,
       (select to_jsonb(t) from freed t where t.id = i.i_thread) as released_thread,
       case when i.i_print then i.i_append::jsonb::text end as appended_text
     from i left join sealed s on s.id = i.i_run
     order by i.i_ord`;

type SealRow = Record<string, unknown> & { eligible: number; released_entry: Record<string, unknown> | null; released_thread: Record<string, unknown> | null };

/** One seal's outcome from its row (either statement). */
function sealOutcome(seal: OneStatementSeal, row: SealRow | undefined): OneStatementOutcome {
  if (!row || row.eligible === 0) return { declined: true };
  if (row.id === null || row.id === undefined) return { declined: false, sealed: undefined };
  const { eligible: _e, guarded: _g, released_entry: entry, released_thread: thread, appended_text: appendedText, ...sealed } = row;
  if (!thread) throw new Error(`the sealed run ${seal.run.id}'s thread ${seal.run.thread_id} was not released`);
  return { declined: false, sealed: { run: mapRun(sealed), entry: entry ? mapEntry(entry) : null, thread: mapThreadState(thread), ...(typeof appendedText === 'string' ? { appendedText } : {}) } };
}

/**
 * Several seals (runs of different threads, none with `concernedSql`) in ONE statement, as
 * sealInOneStatement does for one: an outcome per seal, in their order. Any error — the guard's
 * included — aborts the whole statement (nothing written) and is thrown.
 */
export async function sealManyInOneStatement(db: Queryable, seals: readonly OneStatementSeal[]): Promise<OneStatementOutcome[]> {
  if (seals.some((seal) => seal.change.status === 'waiting')) throw new Error('a waiting run does not release its thread');
  const concernedSql = seals[0]?.concernedSql ?? null;
  if (seals.some((seal) => seal.concernedSql !== concernedSql)) throw new Error('seals with different hook conditions are sealed apart');
  let text = batchTexts.get(concernedSql ?? '');
  if (!text) batchTexts.set(concernedSql ?? '', (text = sealBatchSql(concernedSql)));
  const column = <T>(pick: (seal: OneStatementSeal) => T): T[] => seals.map(pick);
  // As sealValues: an output given as null is JSON null; a failure or pending absent is SQL NULL.
  const json = (value: unknown): string | null => (value ? JSON.stringify(value) : null);
  const result = await db.query<SealRow>(text, [
    column((s) => s.run.id), column((s) => s.attemptId), column((s) => s.change.status), column((s) => (s.change.output === undefined ? null : JSON.stringify(s.change.output))), column((s) => json(s.change.failure)),
    column((s) => s.change.wait_reason ?? null), column((s) => json(s.change.pending)), column((s) => JSON.stringify(s.change.usage)),
    column((s) => s.historyStart + s.history.length), column((s) => s.change.ending_step?.next_ordinal ?? null),
    column((s) => s.run.source_entry_id), column((s) => (s.change.status === 'completed' ? 'completed' : 'failed')), column((s) => s.run.thread_id),
    column((s) => (s.history.length > 0 ? JSON.stringify(s.history) : null)), column((s) => s.history.length > 0 && s.printAppended), column((s) => s.run.workspace_id),
    column((s) => s.historyStart), column((s) => (s.items !== undefined && s.items.length > 0 ? JSON.stringify(s.items) : null)),
  ]);
  if (result.rows.length !== seals.length) throw new Error(`the seal batch statement returned ${result.rows.length} rows for ${seals.length} seals`);
  return seals.map((seal, i) => sealOutcome(seal, result.rows[i]));
}
