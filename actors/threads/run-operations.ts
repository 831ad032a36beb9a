import type pg from 'pg';
import {
  backgroundLane,
  AppError,
  appendThreadHistory,
  firstPendingEntry,
  getRun,
  getRunById,
  lockThread,
  publishEvent,
  subscriptionsWanting,
  requestRunCancel,
  runView,
  sealReleasingThread,
  sealRun,
  setThreadRuns,
  updateEntry,
  withTransaction,
  inFlight,
  type InboxEntry,
  type RunRow,
  type SealChange,
  type ThreadState,
  historyAfter,
  type HistoryPrefixes,
  insertItems,
  type RunItem,
} from '../../runtime/index.js';
import { CHANNEL_RUN_CANCEL, LocalClaims, type EngineContext } from '../engine/index.js';
import { lockThreadOr404 } from './inbox-operations.js';
import { failEntry, startRunForEntry, type StartedRun } from './start-run.js';
import { announceChildResult, childThreads, deliverChildResultSoon, startSubagentChildren } from './subagents.js';
import { ThreadEvents } from './thread-events.js';

/**
 * Starts the next queued input of an idle thread (caller holds the thread lock). Entries whose
 * agent can no longer start fail and the next one is tried, so one bad input never blocks the
 * thread; queued entries start strictly in position order.
 */
export async function advanceLocked(
  context: EngineContext,
  tx: pg.PoolClient,
  thread: ThreadState,
  events: ThreadEvents,
  /** The first pending entry, when the caller already issued its read (after the thread went idle). */
  first?: Promise<InboxEntry | null>,
  /**
   * Where a slot of this process's worker host is kept when one is reserved for the run (see
   * LocalClaims): the caller starts it with the run after the commit, or releases it.
   */
  local?: LocalClaims,
): Promise<StartedRun | null> {
  if (thread.current_run_id !== null) return null;
  for (let entry = await (first ?? firstPendingEntry(tx, thread.id)); entry; entry = await firstPendingEntry(tx, thread.id)) {
    try {
      await tx.query('savepoint start_run');
      const started = await startRunForEntry(tx, thread, entry, context.services.config.worker.max_attempts, undefined, undefined, undefined, undefined, local?.reserve(context));
      await tx.query('release savepoint start_run');
      events.entry(started.entry).run(started.run);
      return started;
    } catch (error) {
      await tx.query('rollback to savepoint start_run');
      if (!(error instanceof AppError)) throw error;
      events.entry(await failEntry(tx, entry, error));
    }
  }
  return null;
}

/** advance_threads for one thread, through its actor. */
export function advanceThread(context: EngineContext, workspaceId: string, threadId: string): Promise<RunRow | null> {
  return context.actors.run(threadId, async () => {
    const events = new ThreadEvents();
    const local = new LocalClaims();
    const started = await withTransaction(context.services.pool, async (tx) => {
      events.clear();
      const thread = await lockThread(tx, workspaceId, threadId);
      return thread ? advanceLocked(context, tx, thread, events, undefined, local) : null;
    }).catch((error: unknown) => {
      local.settle(null);
      throw error;
    });
    const publishing = events.publish(context, threadId);
    local.settle(started?.run);
    await publishing;
    return started?.run ?? null;
  });
}

/** The attempt's final step, committed in the seal's transaction (worker/attempt-runner.ts). */
export interface FinalStepCommit {
  /** Commits the step's rows and moves its pointer, fenced by the attempt; false when fenced out (nothing written). */
  commit(tx: pg.PoolClient): Promise<boolean>;
  /** The pending steer entries the step marks incorporated (by a statement issued after its pointer's answer). */
  readonly incorporated: readonly string[];
  /**
   * A step with no fence of its own (`commit` writes nothing): its items, inserted by the seal's
   * own statement when it seals (sealReleasingThread), or — on the longer path, which reads the
   * seal's answer before its COMMIT — by a statement before it that rolls back with a fenced-out
   * seal. The run's other step columns are the seal's (SealChange.ending_step).
   */
  readonly items?: readonly RunItem[];
}

/** The seal matched no row (its attempt was fenced out): everything issued with it rolls back. */
class SealFencedOut extends Error {
  constructor() {
    super('the seal was fenced out');
  }
}

/**
 * Seals a run and moves its thread on, in one transaction under the thread lock: the run seals
 * exactly once (sealRun matches only an unsealed run owned by `attemptId`), its source entry is
 * finished, its messages join the thread's history, and — unless it waits — the thread is idle
 * again and its next queued input starts. Returns undefined when the seal was fenced out.
 * `finalStep` commits first under the thread lock (the attempt's final step).
 *
 * Round trips (the pool pipelines, runtime/db/transaction.ts): (1) BEGIN, the thread row lock
 * and the final step's fence (its pointer move; for a run that ends, the run's row locked under
 * the attempt, the step's columns then written by the seal's update: SealChange.ending_step); (2) the step's rows, the seal and everything the
 * seal implies that needs no answer from it — issued in the order of the statements they
 * replace, so what each statement reads is unchanged; (3) COMMIT. Those statements are issued
 * before the seal's answer says whether it matched: when it did not (fenced out), they are
 * rolled back with it (SealFencedOut), so a fenced-out seal still writes nothing. Only rare
 * work waits for the seal's row: a subagent wait's children, a child's announcement, the next
 * queued input's run, the seal hooks.
 *
 * The common seal — by an attempt (or a sweep, for it), the run ending (not waiting), no queued
 * input, no webhook for the run's status, no seal hook or parent concerned — is TWO round trips
 * (see sealWithCommit): (1) as above plus the first pending entry's read; (2) the seal, the
 * entry and the thread in one statement, with the COMMIT. An attempt's seal (`historyStart`
 * given) whose last step needs no statement of its own tries ONE statement first
 * (sealOneStatement), which declines, writing nothing, whenever this path is needed.
 */
export function sealAndAdvance(
  context: EngineContext,
  run: Pick<RunRow, 'id' | 'workspace_id' | 'thread_id' | 'source_entry_id'>,
  attemptId: string | null,
  change: SealChange,
  history: unknown[],
  inTransaction?: (tx: pg.PoolClient, sealed: RunRow) => Promise<void>,
  finalStep?: FinalStepCommit,
  /** The run's history_start (an attempt's seal): allows the seal in one statement. */
  historyStart?: number,
): Promise<RunRow | undefined> {
  return context.actors.run(run.thread_id, async () => {
    // Decided before the transaction from what no statement needs to tell: whether the seal can
    // commit with its own statements (the thread's part is decided under its lock, below).
    const mayCommitWithSeal = attemptId !== null && change.status !== 'waiting' && !inTransaction
      && (await subscriptionsWanting(context.services.caches, context.services.pool, run.workspace_id, `run.${change.status}`)).length === 0;
    if (mayCommitWithSeal && historyStart !== undefined && (!finalStep || finalStep.items) && context.sealHooks.every((hook) => hook.concernedSql)) {
      const oneStatement = await sealOneStatement(context, run, attemptId!, change, history, historyStart, finalStep?.items);
      if (oneStatement !== 'declined') return oneStatement;
    }
    const events = new ThreadEvents();
    /** Parents to tell at once, after the commit, that a child of theirs ended. */
    const parents: string[] = [];
    // The next queued input's run, claimed for this process's worker when it has a free slot —
    // or when the attempt sealing here is this process's: it hands its slot on.
    const local = new LocalClaims(attemptId !== null ? run.id : undefined);
    let nextRun: RunRow | null = null;
    // A seal by an attempt (its worker) or a sweep is background work (PoolLane): the run's
    // output is already on the stream. An API cancel (no attempt) answers a request.
    const pool = attemptId !== null ? backgroundLane(context.services.pool) : context.services.pool;
    const result = await withTransaction(pool, async (tx): Promise<RunRow | CommittingSeal | undefined> => {
      nextRun = null;
      parents.length = 0; // a retried transaction starts over
      events.clear();
      // The same row lock as ever, first in the transaction; the seal never reads the history
      // (appendThreadHistory appends in the database), so the lock reads the state only.
      const locking = inFlight(lockThreadOr404(tx, run.workspace_id, run.thread_id));
      // The run's final step (its items and checkpoint pointer) commits in this transaction,
      // before the seal: fenced by the attempt like any step (RUNS.md 2, 3); fenced out, nothing
      // is written and the seal is not attempted.
      const stepping = finalStep ? inFlight(finalStep.commit(tx)) : null;
      // The thread's first pending entry, read in the same round trip, behind the lock: under
      // READ COMMITTED this statement's snapshot is taken once the lock is granted, so it sees
      // every entry committed before (an entry is only ever added or withdrawn under this lock,
      // so none changes while it is held). The steer entries the final step incorporates are
      // excluded: the step's statement that marks them is issued after this read.
      const pendingRead = mayCommitWithSeal ? inFlight(firstPendingEntry(tx, run.thread_id, finalStep?.incorporated)) : null;
      const thread = await locking;
      if (stepping && !(await stepping)) return undefined;
      const pending = pendingRead ? await pendingRead : undefined;
      if (pending === null && thread.origin !== 'subagent' && !context.sealHooks.some((hook) => !hook.concerns || hook.concerns(thread, change.status))) {
        return sealWithCommit(tx, run, attemptId!, change, history, thread, events, context.services.histories, finalStep?.items);
      }
      const idle = change.status !== 'waiting';
      // The history the run leaves is the thread's (message_count, read under the lock) plus
      // what the seal appends: recorded by the seal itself, not measured by a statement after.
      // A folded final step's items: rolled back with the seal if it is fenced out (SealFencedOut).
      const inserting = finalStep?.items ? inFlight(insertItems(tx, run.id, finalStep.items)) : null;
      const sealing = inFlight(sealRun(tx, run.id, attemptId, change, thread.message_count + history.length));
      // The input is finished with its run; a waiting run keeps its entry assigned for the
      // successor. (sealRun writes change.failure as the run's failure.)
      const finishing = run.source_entry_id && idle
        ? inFlight(updateEntry(tx, run.source_entry_id, { status: change.status === 'completed' ? 'completed' : 'failed', finished: true, ...(change.failure ? { failure: change.failure } : {}) }))
        : null;
      // The run's messages join the thread's history; an idle thread is freed by the same
      // statement (one update of the row), which also returns the thread as this transaction
      // leaves it, for thread.changed.
      const appending = idle ? null : inFlight(appendThreadHistory(tx, thread.id, history));
      // the webhook event commits with the seal it announces
      const announcing = inFlight(publishEvent(tx, { workspace_id: run.workspace_id, type: `run.${change.status}`, data: sealing.then((done) => (done ? { run: runView(done) } : null)) }, { caches: context.services.caches }));
      const freeing = idle ? inFlight(setThreadRuns(tx, thread.id, null, run.id, history)) : null;
      // The read of round trip 1 when there was one (nothing issued since changes what is pending).
      const next = idle ? (pendingRead ?? inFlight(firstPendingEntry(tx, thread.id))) : undefined;
      // A waiting run keeps the thread: the thread as this transaction leaves it, for
      // thread.changed, is read back (already locked above: this re-reads the state, with the
      // appended history's new message_count); read again below only when something after this
      // batch changes the thread.
      const rereading = idle ? null : inFlight(lockThread(tx, run.workspace_id, thread.id));
      const done = await sealing;
      if (!done) throw new SealFencedOut();
      events.run(done);
      const entry = finishing ? await finishing : null;
      if (entry) events.entry(entry);
      await Promise.all([appending, announcing, inserting]);
      let after = idle ? await freeing! : (await rereading!)!;
      let changedAfter = false;
      // Children start with the wait that needs them, and a child's end is announced to its
      // parent with the seal that ends it: both commit or neither does.
      if (done.status === 'waiting' && done.wait_reason === 'subagent' && (await startSubagentChildren(context, tx, done))) {
        parents.push(done.id);
        changedAfter = true;
      }
      const parent = await announceChildResult(tx, thread, done);
      if (parent) parents.push(parent);
      if (idle) {
        const started = await advanceLocked(context, tx, { ...thread, current_run_id: null }, events, next, local);
        if (started) {
          after = started.thread;
          nextRun = started.run;
        }
      }
      if (inTransaction) {
        await inTransaction(tx, done);
        changedAfter = true;
      }
      for (const hook of context.sealHooks) await hook(tx, done, context.services, thread);
      if (changedAfter) after = (await lockThread(tx, run.workspace_id, thread.id)) ?? after;
      events.thread(after);
      return done;
    }).catch((error: unknown) => {
      local.settle(null);
      if (error instanceof SealFencedOut) return undefined;
      throw error;
    });
    let sealed: RunRow | undefined;
    try {
      sealed = result && 'committing' in result ? await result.committing : result;
      if (result && 'committing' in result) result.remember();
    } catch (error) {
      local.settle(null);
      throw error;
    }
    const publishing = events.publish(context, run.thread_id);
    local.settle(nextRun);
    await publishing;
    if (sealed) await context.bus.clearTail(run.id);
    for (const parent of parents) deliverChildResultSoon(context, parent);
    return sealed;
  });
}

/**
 * The common seal in one statement and one round trip (sealInOneStatement), tried first by
 * sealAndAdvance when nothing known before it rules it out; 'declined' (nothing written) when
 * the statement finds something must follow the release — the transaction path then seals.
 * Inside the thread's actor, like the transaction path.
 */
async function sealOneStatement(
  context: EngineContext,
  run: Pick<RunRow, 'id' | 'workspace_id' | 'thread_id' | 'source_entry_id'>,
  attemptId: string,
  change: SealChange,
  history: unknown[],
  historyStart: number,
  items: readonly RunItem[] | undefined,
): Promise<RunRow | undefined | 'declined'> {
  const concerned = context.sealHooks.map((hook) => hook.concernedSql!(change.status)).filter((sql): sql is string => sql !== null);
  // As sealWithCommit: the appended messages are printed back only when this process holds the
  // history before them (its length is history_start while the run is the thread's current one).
  const histories = context.services.histories;
  const held = history.length > 0 ? histories.get(run.thread_id) : undefined;
  const before = historyStart === 0 ? undefined : held?.count === historyStart ? held : null;
  // Alone or with the seals of other runs ending in this tick, in one statement (SealBatcher).
  const outcome = await context.services.seals.seal({
    run, attemptId, change, historyStart, history, printAppended: before !== null, items,
    concernedSql: concerned.length === 0 ? null : concerned.map((sql) => `(${sql})`).join(' or '),
  });
  if (outcome.declined) return 'declined';
  const done = outcome.sealed;
  if (!done) return undefined; // fenced out: nothing was written
  if (before !== null && done.appendedText !== undefined) histories.remember(run.thread_id, historyAfter(before, done.appendedText, historyStart + history.length));
  const events = new ThreadEvents();
  events.run(done.run);
  if (done.entry) events.entry(done.entry);
  events.thread(done.thread);
  await events.publish(context, run.thread_id);
  await context.bus.clearTail(run.id);
  return done.run;
}

/** The last statement of a seal that needs nothing after it (sealAndAdvance): the COMMIT follows at once. */
interface CommittingSeal {
  /** The sealed run, or undefined when the seal was fenced out (and the statement wrote nothing). */
  readonly committing: Promise<RunRow | undefined>;
  /** After the COMMIT: keeps the history the seal left in this process's HistoryPrefixes, when it can. */
  readonly remember: () => void;
}

/**
 * Issues the seal with the source entry's finish and the thread's release — ONE statement
 * (sealReleasingThread) — and returns without waiting for its answer, so withTransaction's
 * COMMIT leaves with it: round trip 2 is the last. Committing unseen is safe because the
 * statement is fenced whole: the entry and the thread change only when the seal matched (this
 * attempt's run, unsealed). Fenced out, it writes nothing and the seal answers undefined, as
 * the three-round-trip path does — with one difference a final step makes: its rows, issued
 * before, are a step commit fenced by its own pointer move or lock; and that statement (round
 * trip 1) left the run's row locked FOR UPDATE under this attempt, so the seal cannot miss after it. A
 * statement that fails aborts the transaction and the COMMIT answers ROLLBACK, as ever.
 * Nothing else is issued: the caller checked that no queued entry waits (so no next run), no
 * webhook wants the status, no seal hook and no parent (a subagent thread) is concerned.
 */
function sealWithCommit(
  tx: pg.PoolClient,
  run: Pick<RunRow, 'id' | 'workspace_id' | 'thread_id' | 'source_entry_id'>,
  attemptId: string,
  change: SealChange,
  history: unknown[],
  thread: ThreadState,
  events: ThreadEvents,
  histories: HistoryPrefixes,
  items?: readonly RunItem[],
): CommittingSeal {
  // The history the seal leaves, for this process's HistoryPrefixes when it holds exactly the
  // history before the run's messages (message_count, read under the thread lock): the next
  // input of the thread can then start its attempt before its own statement answers
  // (SpeculativeAttempt). Remembered only after the COMMIT (sealAndAdvance).
  const held = history.length > 0 ? histories.get(thread.id) : undefined;
  const before = thread.message_count === 0 ? undefined : held?.count === thread.message_count ? held : null;
  const sealing = inFlight(sealReleasingThread(tx, run, attemptId, change, thread.message_count + history.length, history, before !== null, items));
  let appended: string | undefined;
  const committing = sealing.then((done) => {
    if (!done) return undefined; // fenced out: nothing was written
    events.run(done.run);
    if (done.entry) events.entry(done.entry);
    events.thread(done.thread);
    appended = done.appendedText;
    return done.run;
  });
  committing.catch(() => undefined); // awaited after the COMMIT; its failure is the transaction's
  const remember = (): void => {
    if (before !== null && appended !== undefined) histories.remember(thread.id, historyAfter(before, appended, thread.message_count + history.length));
  };
  return { committing, remember };
}

/**
 * Cancels a run. Accepted (not yet claimed): sealed cancelled at once. Running: the request is
 * recorded and the worker holding the lease is told (NOTIFY); it aborts the attempt — including
 * an in-flight model stream — and seals the run cancelled. Waiting: sealed cancelled, freeing
 * the thread. Already sealed otherwise: 409.
 */
export async function cancelRun(context: EngineContext, workspaceId: string, runId: string): Promise<RunRow> {
  const run = await getRun(context.services.pool, workspaceId, runId);
  if (!run) throw new AppError('not_found', 'run not found');
  if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') {
    throw new AppError('conflict', `the run is already ${run.status}`, { details: { status: run.status } });
  }
  if (run.status === 'running') {
    const requested = await withTransaction(context.services.pool, async (tx) => {
      const updated = await requestRunCancel(tx, run.id);
      await tx.query('select pg_notify($1, $2)', [CHANNEL_RUN_CANCEL, run.id]);
      return updated;
    });
    return requested ?? (await getRunById(context.services.pool, run.id))!;
  }
  const sealed = await sealAndAdvance(context, run, null, { status: 'cancelled', usage: run.usage, failure: null }, []);
  if (!sealed) return cancelRun(context, workspaceId, runId); // it moved on meanwhile: decide again
  if (run.wait_reason === 'subagent') await cancelChildren(context, sealed);
  return sealed;
}

/**
 * Cancelling a parent that waits for subagents cancels its children's runs (and theirs, in
 * turn). Their ends are still announced, and the deliveries find the parent cancelled.
 */
async function cancelChildren(context: EngineContext, parent: RunRow): Promise<void> {
  for (const thread of await childThreads(context, parent)) {
    if (!thread.current_run_id) continue;
    try {
      await cancelRun(context, parent.workspace_id, thread.current_run_id);
    } catch (error) {
      // It ended on its own meanwhile.
      if (!(error instanceof AppError && error.code === 'conflict')) throw error;
    }
  }
}
