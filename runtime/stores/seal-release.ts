import type { Queryable } from '../db/index.js';
import { mapEntry, type InboxEntry } from './inbox-entries.js';
import { sealCtes, sealValues, type SealChange } from './run-leases.js';
import { INSERT_ITEMS_SELECT, type RunItem } from './run-items.js';
import { mapRun, type RunRow } from './runs.js';
import { mapThreadState, T_STATE_COLUMNS, type ThreadState } from './threads.js';

/**
 * The release statement's text, shared by sealReleasingThread and sealInOneStatement (seal-one.ts):
 * the seal (SEAL_CTES, $1–$10), the run's last step's items when `itemsParam` names the parameter
 * holding them as a JSON array, the source entry's finish ($11 the entry, $12 its status) and the
 * thread's release ($13), with the run's messages appended when `append` ($14 the messages, $15
 * whether to print them back; the message_count trigger fires only when message_history is set).
 * Every write depends on the seal. The one-statement seal adds CTEs before (`before`) and after
 * (`after`), conditions on the seal (`sealAlso`) and the release (`freedAlso`), and columns
 * (`columns`) read beside a possibly absent seal (`outer`: one row whatever was sealed).
 */
export function releaseStatement(options: { append: boolean; itemsParam: number | null; before?: string; sealAlso?: string; freedAlso?: string; after?: string; columns?: string; outer?: boolean }): string {
  const { append, itemsParam } = options;
  return `with ${options.before ? `${options.before}, ` : ''}${sealCtes(options.sealAlso)}, ${itemsParam === null ? '' : `step_items as (
       ${INSERT_ITEMS_SELECT.replace('$2::jsonb', `$${itemsParam}::jsonb`)} where exists (select 1 from sealed)
     ), `}finished as (
       update inbox_entries set version = version + 1, status = $12, failure = coalesce($5::jsonb, failure), finished_at = coalesce(finished_at, now())
        where id = $11 and exists (select 1 from sealed) returning *
     ), freed as (
       update threads t set ${append ? 'message_history = message_history || $14::jsonb, ' : ''}current_run_id = null, last_run_id = $1, updated_at = now(), version = version + 1
        where t.id = $13 and exists (select 1 from sealed)${options.freedAlso ? ` and ${options.freedAlso}` : ''}
        returning ${T_STATE_COLUMNS}
     )${options.after ? `, ${options.after}` : ''}
     select ${options.columns ? `${options.columns}, ` : ''}s.*, (select to_jsonb(f) from finished f) as released_entry, (select to_jsonb(t) from freed t) as released_thread${append ? ', case when $15::boolean then $14::jsonb::text end as appended_text' : ''}
     from ${options.outer ? '(select) one left join sealed s on true' : 'sealed s'}`;
}

const releaseSql = (append: boolean, itemsParam: number | null): string => releaseStatement({ append, itemsParam });
const RELEASE_APPENDING_SQL = releaseSql(true, null);
const RELEASE_SQL = releaseSql(false, null);
const RELEASE_APPENDING_ITEMS_SQL = releaseSql(true, 16);
const RELEASE_ITEMS_SQL = releaseSql(false, 14);

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
  /**
   * The run's last step's items, inserted by this statement when the seal matched (so they
   * commit with it or not at all): a final step with no fence of its own (FinalStepCommit.items).
   */
  items?: readonly RunItem[],
): Promise<{ run: RunRow; entry: InboxEntry | null; thread: ThreadState; appendedText?: string } | undefined> {
  if (change.status === 'waiting') throw new Error('a waiting run does not release its thread');
  const append = history.length > 0;
  const withItems = items !== undefined && items.length > 0;
  const values = [...sealValues(run.id, attemptId, change, historyEnd), run.source_entry_id, change.status === 'completed' ? 'completed' : 'failed', run.thread_id];
  if (append) values.push(JSON.stringify(history), printAppended);
  if (withItems) values.push(JSON.stringify(items));
  // The run's own columns come back as the row (a large row is cheaper as columns than as
  // jsonb); the entry and the thread as jsonb beside them. No row: the seal was fenced out.
  const result = await db.query<Record<string, unknown> & { released_entry: Record<string, unknown> | null; released_thread: Record<string, unknown> | null }>(
    append ? (withItems ? RELEASE_APPENDING_ITEMS_SQL : RELEASE_APPENDING_SQL) : withItems ? RELEASE_ITEMS_SQL : RELEASE_SQL,
    values,
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const { released_entry: entry, released_thread: thread, appended_text: appendedText, ...sealed } = row;
  if (!thread) throw new Error(`the sealed run ${run.id}'s thread ${run.thread_id} was not released`);
  return { run: mapRun(sealed), entry: entry ? mapEntry(entry) : null, thread: mapThreadState(thread), ...(typeof appendedText === 'string' ? { appendedText } : {}) };
}
