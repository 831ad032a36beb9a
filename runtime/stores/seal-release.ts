import type { Queryable } from '../db/index.js';
import { mapEntry, type InboxEntry } from './inbox-entries.js';
import { SEAL_CTES, sealValues, type SealChange } from './run-leases.js';
import { mapRun, type RunRow } from './runs.js';
import { mapThreadState, STATE_COLUMNS, type ThreadState } from './threads.js';

/** The thread's release: the run's messages appended (the message_count trigger fires only when message_history is set), or not. */
const releaseSql = (append: boolean): string => `with ${SEAL_CTES}, finished as (
       update inbox_entries set version = version + 1, status = $12, failure = coalesce($5::jsonb, failure), finished_at = coalesce(finished_at, now())
        where id = $11 and exists (select 1 from sealed) returning *
     ), freed as (
       update threads set ${append ? 'message_history = message_history || $14::jsonb, ' : ''}current_run_id = null, last_run_id = $1, updated_at = now(), version = version + 1
        where id = $13 and exists (select 1 from sealed) returning ${STATE_COLUMNS}
     )
     select s.*, (select to_jsonb(f) from finished f) as released_entry, (select to_jsonb(t) from freed t) as released_thread${append ? ', case when $15::boolean then $14::jsonb::text end as appended_text' : ''} from sealed s`;
const RELEASE_APPENDING_SQL = releaseSql(true);
const RELEASE_SQL = releaseSql(false);

/**
 * The seal of a run that ends (completed, failed, cancelled) and frees its thread, in ONE
 * statement: the seal (sealRun's CTEs: the run, fenced by `attemptId`, and its attempt row), its
 * source entry finished (completed, or failed with the run's failure), and the thread released
 * (not current, this run its last, the run's messages appended). The entry and the thread change
 * only when the seal matched (`exists (select 1 from sealed)`): a fenced-out seal writes nothing.
 * The caller holds the thread's lock and has checked that nothing else follows the release (no
 * queued input to start: sealAndAdvance).
 */
export async function sealReleasingThread(
  db: Queryable,
  run: { id: string; source_entry_id: string | null; thread_id: string },
  attemptId: string,
  /** An ending status (not waiting: a waiting run keeps its entry and its thread). */
  change: SealChange,
  historyEnd: number,
  history: unknown[],
  /**
   * Return the appended messages as PostgreSQL prints them (`appendedText`), for a process that
   * holds the thread's history before them (HistoryPrefixes): printed by the same jsonb output
   * as a read of the history, so the joined text is the one a read would return.
   */
  printAppended = false,
): Promise<{ run: RunRow; entry: InboxEntry | null; thread: ThreadState; appendedText?: string } | undefined> {
  if (change.status === 'waiting') throw new Error('a waiting run does not release its thread');
  const append = history.length > 0;
  const values = [...sealValues(run.id, attemptId, change, historyEnd), run.source_entry_id, change.status === 'completed' ? 'completed' : 'failed', run.thread_id];
  // The run's own columns come back as the row (a large row is cheaper as columns than as
  // jsonb); the entry and the thread as jsonb beside them. No row: the seal was fenced out.
  const result = await db.query<Record<string, unknown> & { released_entry: Record<string, unknown> | null; released_thread: Record<string, unknown> | null }>(
    append ? RELEASE_APPENDING_SQL : RELEASE_SQL,
    append ? [...values, JSON.stringify(history), printAppended] : values,
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const { released_entry: entry, released_thread: thread, appended_text: appendedText, ...sealed } = row;
  if (!thread) throw new Error(`the sealed run ${run.id}'s thread ${run.thread_id} was not released`);
  return { run: mapRun(sealed), entry: entry ? mapEntry(entry) : null, thread: mapThreadState(thread), ...(typeof appendedText === 'string' ? { appendedText } : {}) };
}
