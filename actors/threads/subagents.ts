// Subagents (TOOLS.md "Subagents"): a run that called delegate_<name> tools seals `waiting`
// with wait_reason `subagent`; each call becomes a child thread (origin subagent) whose first
// run (lineage subagent, parent = the waiting run) executes the named agent on the task. When
// a child thread's run ends, a `child_result` outbox row tells the parent; when every child of
// the wait has ended, the parent's successor starts with the children's answers as the calls'
// tool results, through the same resume path a client uses.
//
// State lives in rows, not in memory: the child threads (origin_run_id, origin_tool_call_id)
// and their runs are the record of which calls have answered, so a delivery that is repeated,
// or that sees a sibling still running, needs no bookkeeping of its own.
import type pg from 'pg';
import {
  AppError,
  ID_PREFIX,
  getRunById,
  insertEntry,
  insertOutboxRow,
  insertThread,
  newId,
  subagentThreadsOf,
  takePositions,
  type OutboxHandler,
  type RunRow,
  type ThreadState,
} from '../../runtime/index.js';
import { engineFor, type EngineContext } from '../engine/index.js';
import { resumeRun } from './resume-run.js';
import { failEntry, startRunForEntry } from './start-run.js';

interface PendingCall {
  tool_call_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  presentation: Record<string, unknown>;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

function subagentCalls(run: RunRow): PendingCall[] {
  const calls = ((run.pending?.calls ?? []) as unknown as PendingCall[]).filter((c) => c.presentation?.kind === 'subagent');
  return calls;
}

/**
 * Starts one child thread and run per subagent call of a run that just sealed waiting, in the
 * seal's transaction: the children exist exactly when the wait does (the seal happens once,
 * RUNS.md invariant 6), so a crash can neither lose nor duplicate them. A child whose agent
 * cannot start (archived since the revision was published) gets a failed entry and no run;
 * its call is answered with that failure.
 */
export async function startSubagentChildren(context: EngineContext, tx: pg.PoolClient, parent: RunRow): Promise<boolean> {
  let unstarted = false;
  for (const call of subagentCalls(parent)) {
    const thread = await insertThread(tx, {
      id: newId(ID_PREFIX.thread),
      workspace_id: parent.workspace_id,
      session_id: parent.session_id,
      labels: {},
      origin: 'subagent',
      origin_run_id: parent.id,
      origin_thread_id: parent.thread_id,
      origin_tool_call_id: call.tool_call_id,
      subagent: String(call.presentation.subagent ?? ''),
    });
    const runId = newId(ID_PREFIX.run);
    const revisionId = typeof call.presentation.agent_revision_id === 'string' ? call.presentation.agent_revision_id : null;
    const entry = await insertEntry(tx, {
      id: newId(ID_PREFIX.inboxEntry),
      workspace_id: parent.workspace_id,
      thread_id: thread.id,
      kind: 'message',
      delivery: 'queue',
      position: await takePositions(tx, thread.id, 1),
      payload: { content: [{ type: 'text', text: String(call.arguments.task ?? '') }] },
      options: {},
      agent_id: String(call.presentation.agent_id),
      agent_revision_id: revisionId,
      principal_id: parent.principal_id,
      origin_run_id: parent.id,
      request_key: null,
      child_run_id: runId,
    });
    try {
      await tx.query('savepoint start_child');
      // A brand-new thread has no subscribers yet; the child's own stream starts with its run.
      await startRunForEntry(tx, thread, entry, context.services.config.worker.max_attempts, undefined, runId);
      await tx.query('release savepoint start_child');
    } catch (error) {
      await tx.query('rollback to savepoint start_child');
      if (!(error instanceof AppError)) throw error;
      await failEntry(tx, entry, error);
      // Nothing will seal in that thread: the parent hears of the failure now.
      await insertOutboxRow(tx, { kind: 'child_result', workspace_id: parent.workspace_id, payload: { parent_run_id: parent.id, child_thread_id: thread.id } });
      unstarted = true;
    }
  }
  return unstarted;
}

/**
 * A run of a child thread ended: queue the news for its parent in the same transaction as the
 * seal (spec 8: the outbox row commits with the change it announces).
 */
export async function announceChildResult(tx: pg.PoolClient, thread: ThreadState, sealed: RunRow): Promise<string | null> {
  if (thread.origin !== 'subagent' || !thread.origin_run_id || !TERMINAL.has(sealed.status)) return null;
  await insertOutboxRow(tx, { kind: 'child_result', workspace_id: sealed.workspace_id, payload: { parent_run_id: thread.origin_run_id, child_thread_id: thread.id, child_run_id: sealed.id } });
  return thread.origin_run_id;
}

/**
 * Delivers at once, after the announcing commit, what the outbox row would deliver on its next
 * scan: a parent should not wait a scan interval for its children. The row stays the durable
 * path (a crash right here loses nothing), and its later delivery finds the work done.
 */
export function deliverChildResultSoon(context: EngineContext, parentRunId: string): void {
  deliverChildResult(context, { parent_run_id: parentRunId }).catch((err: unknown) => {
    context.services.logger.warn({ err, run_id: parentRunId }, 'child result not delivered at once; the outbox retries it');
  });
}

type CallAnswer = { status: 'returned' | 'error'; value: unknown };

/** The answer of one child thread, or null while it has not ended. */
async function childAnswer(context: EngineContext, thread: ThreadState): Promise<CallAnswer | null> {
  const runId = thread.last_run_id;
  if (thread.current_run_id !== null) return null;
  if (!runId) {
    // No run ever started: the entry failed (its agent could not start).
    const entry = await context.services.pool.query<{ failure: { code: string; message: string } | null; status: string }>(
      `select failure, status from inbox_entries where thread_id = $1 order by position limit 1`,
      [thread.id],
    );
    const row = entry.rows[0];
    if (!row || row.status !== 'failed') return null;
    return { status: 'error', value: `the subagent could not start: ${row.failure?.message ?? 'unknown reason'}` };
  }
  const run = await getRunById(context.services.pool, runId);
  if (!run || !TERMINAL.has(run.status)) return null;
  if (run.status === 'completed') return { status: 'returned', value: run.output };
  // A failed or cancelled child is a failed tool result for the parent, not a failed parent.
  return { status: 'error', value: run.status === 'cancelled' ? 'the subagent was cancelled' : `the subagent failed: ${run.failure?.code ?? 'failed'}: ${run.failure?.message ?? ''}` };
}

/**
 * Delivers one child_result row: when every subagent call of the parent's wait has an ended
 * child, resumes the parent with their answers. At least once and idempotent: the parent is
 * resumed at most once (the resume path's setResumedBy under the parent's thread lock), and a
 * parent that is no longer waiting (resumed by a sibling's delivery, or cancelled) needs nothing.
 * Siblings that end together each see the other's seal: each row commits with its own seal, so
 * the delivery of the row committed last finds every child ended.
 */
export async function deliverChildResult(context: EngineContext, payload: { parent_run_id?: unknown }): Promise<void> {
  if (typeof payload.parent_run_id !== 'string') return;
  const parent = await getRunById(context.services.pool, payload.parent_run_id);
  if (!parent || parent.status !== 'waiting' || parent.wait_reason !== 'subagent' || parent.resumed_by_id) return;
  const threads = await subagentThreadsOf(context.services.pool, parent.workspace_id, parent.id);
  const calls: Record<string, CallAnswer> = {};
  for (const call of subagentCalls(parent)) {
    const thread = threads.find((t) => t.origin_tool_call_id === call.tool_call_id);
    const answer = thread ? await childAnswer(context, thread) : null;
    if (!answer) return; // a sibling is still working: its own row completes the wait
    calls[call.tool_call_id] = answer;
  }
  try {
    await resumeRun(context, { workspaceId: parent.workspace_id, runId: parent.id, principalId: parent.principal_id, answeredBy: 'subagents' }, { calls }, async () => undefined);
  } catch (error) {
    // Another delivery resumed it first, or it was cancelled meanwhile: nothing left to do.
    if (error instanceof AppError && error.code === 'conflict') return;
    throw error;
  }
}

/** Outbox handler of kind child_result; a thrown error is a failed try, retried by the kind's policy. */
export const childResultHandler: OutboxHandler = async (row, { services }) => {
  await deliverChildResult(engineFor(services), row.payload as { parent_run_id?: unknown });
  return { type: 'delivered' };
};

/** The child threads of a run (for cancellation and the items page's observer). */
export function childThreads(context: EngineContext, run: RunRow): Promise<ThreadState[]> {
  return subagentThreadsOf(context.services.pool, run.workspace_id, run.id);
}
