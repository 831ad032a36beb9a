import type { Queryable } from '../db/index.js';
import { pgCode, PG_DEADLOCK_DETECTED } from '../errors/index.js';
import { mapEntry, type InboxEntry } from './inbox-entries.js';
import type { RunItem } from './run-items.js';
import { sealValues, type SealChange } from './run-leases.js';
import { releaseStatement } from './seal-release.js';
import { mapRun, type RunRow } from './runs.js';
import { mapThreadState, type ThreadState } from './threads.js';

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
  let row: (Record<string, unknown> & { eligible: number; released_entry: Record<string, unknown> | null; released_thread: Record<string, unknown> | null }) | undefined;
  try {
    row = (await db.query(sqlFor(append, withItems, seal.concernedSql), values)).rows[0];
  } catch (error) {
    const code = pgCode(error);
    if (code === PG_DIVISION_BY_ZERO || code === PG_DEADLOCK_DETECTED) return { declined: true };
    throw error;
  }
  if (!row || row.eligible === 0) return { declined: true };
  if (row.id === null || row.id === undefined) return { declined: false, sealed: undefined };
  const { eligible: _e, guarded: _g, released_entry: entry, released_thread: thread, appended_text: appendedText, ...sealed } = row;
  if (!thread) throw new Error(`the sealed run ${seal.run.id}'s thread ${seal.run.thread_id} was not released`);
  return { declined: false, sealed: { run: mapRun(sealed), entry: entry ? mapEntry(entry) : null, thread: mapThreadState(thread), ...(typeof appendedText === 'string' ? { appendedText } : {}) } };
}
