import type pg from 'pg';
import {
  AppError,
  checkInputMedia,
  ID_PREFIX,
  getRun,
  insertRun,
  newId,
  publishEvent,
  runView,
  setResumedBy,
  setThreadRuns,
  withTransaction,
  type RunRow,
} from '../../runtime/index.js';
import { CHANNEL_RUN_ACCEPTED, type EngineContext } from '../engine/index.js';
import { lockThreadOr404 } from './inbox-operations.js';
import { ThreadEvents } from './thread-events.js';

export interface ResumeBatch {
  approvals?: Record<string, { action: string; reason?: string }>;
  calls?: Record<string, { status: string; value?: unknown }>;
  input?: { content: Array<Record<string, unknown>> };
}

interface PendingCall {
  tool_call_id: string;
}

function difference(expected: string[], given: string[]): { missing: string[]; unexpected: string[] } {
  return { missing: expected.filter((id) => !given.includes(id)), unexpected: given.filter((id) => !expected.includes(id)) };
}

/** The batch must answer exactly the open approvals and calls: nothing omitted, nothing added. */
function checkBatch(run: RunRow, batch: ResumeBatch): void {
  const pending = run.pending ?? { approvals: [], calls: [] };
  const approvals = difference((pending.approvals as PendingCall[]).map((p) => p.tool_call_id), Object.keys(batch.approvals ?? {}));
  const calls = difference((pending.calls as PendingCall[]).map((p) => p.tool_call_id), Object.keys(batch.calls ?? {}));
  if (approvals.missing.length + approvals.unexpected.length + calls.missing.length + calls.unexpected.length > 0) {
    throw new AppError('conflict', 'the resume batch must answer exactly the pending approvals and calls', {
      details: { missing_approvals: approvals.missing, unexpected_approvals: approvals.unexpected, missing_calls: calls.missing, unexpected_calls: calls.unexpected },
    });
  }
  if (run.wait_reason === 'user_question' && !batch.input && calls.missing.length > 0) {
    throw new AppError('conflict', 'answer the question with input or the pending call');
  }
}

/**
 * Resumes the exact waiting run with the complete result batch (RUNS.md invariant 7): under
 * the thread lock the run must still be waiting and not yet resumed; the successor (lineage
 * resume, parent = the waiting run) starts from the waiting run's checkpoint and stores the
 * batch verbatim in `resume` — no omission defaults. setResumedBy only matches an unresumed
 * waiting run, so concurrent duplicate resumes create one successor; the losers get 409.
 */
export async function resumeRun(
  context: EngineContext,
  target: {
    workspaceId: string;
    runId: string;
    principalId: string | null;
    /** Who answers: a client (approvals, client calls, questions) or the service (subagent children). */
    answeredBy?: 'client' | 'subagents';
  },
  batch: ResumeBatch,
  onCommit: (tx: pg.PoolClient, successor: RunRow) => Promise<void>,
  onBegin?: (tx: pg.PoolClient) => Promise<void>,
): Promise<RunRow> {
  const found = await getRun(context.services.pool, target.workspaceId, target.runId);
  if (!found) throw new AppError('not_found', 'run not found');
  return context.actors.run(found.thread_id, async () => {
    const events = new ThreadEvents();
    const successor = await withTransaction(context.services.pool, async (tx) => {
      // The folded Idempotency-Key claim first: a replayed resume answers its stored response
      // instead of reaching the "already resumed" check below.
      await onBegin?.(tx);
      const thread = await lockThreadOr404(tx, target.workspaceId, found.thread_id);
      const run = (await getRun(tx, target.workspaceId, target.runId))!;
      if (run.status !== 'waiting') throw new AppError('conflict', `only a waiting run can be resumed; this one is ${run.status}`, { details: { status: run.status } });
      if (run.resumed_by_id) throw new AppError('conflict', 'this run was already resumed', { details: { resumed_by_id: run.resumed_by_id } });
      // A subagent wait is answered by its children's results (subagents.ts), never by a client.
      const bySubagents = (target.answeredBy ?? 'client') === 'subagents';
      if ((run.wait_reason === 'subagent') !== bySubagents) {
        throw new AppError('conflict', bySubagents ? 'this run does not wait for subagents' : 'this run waits for its subagents: their results resume it', { details: { wait_reason: run.wait_reason } });
      }
      checkBatch(run, batch);
      // Media parts of the answer are checked for new use; the batch itself is stored verbatim
      // (the attempt gets the assets' facts from its host, prepare-attempt.ts).
      await checkInputMedia(tx, target.workspaceId, batch.input?.content, 'body.input.content');
      const next = await insertRun(tx, {
        id: newId(ID_PREFIX.run),
        workspace_id: run.workspace_id,
        session_id: run.session_id,
        thread_id: thread.id,
        agent_id: run.agent_id,
        agent_revision_id: run.agent_revision_id,
        revision_selection: 'pinned',
        trigger: 'resume',
        lineage: 'resume',
        parent_run_id: run.id,
        source_entry_id: run.source_entry_id,
        principal_id: target.principalId,
        max_attempts: context.services.config.worker.max_attempts,
        labels: run.labels,
        input: run.input,
        options: run.options,
        config: run.config,
        // The successor continues the waiting run's conversation: same mounts, and the records
        // its recall put into the context stay there (they are not searched again).
        memory_mounts: run.memory_mounts,
        memory_sources: run.memory_sources,
        resume: batch as Record<string, unknown>,
        checkpoint_key: run.checkpoint_key,
        checkpoint_seq: run.checkpoint_seq,
        next_ordinal: 1,
      });
      if (!(await setResumedBy(tx, run.id, next.id))) throw new AppError('conflict', 'this run was already resumed');
      await setThreadRuns(tx, thread.id, next.id);
      await tx.query('select pg_notify($1, $2)', [CHANNEL_RUN_ACCEPTED, next.id]);
      await publishEvent(tx, { workspace_id: next.workspace_id, type: 'run.accepted', data: { run: runView(next) } }, { caches: context.services.caches });
      await onCommit(tx, next);
      events.run(next);
      return next;
    });
    await events.publish(context, found.thread_id);
    return successor;
  });
}
