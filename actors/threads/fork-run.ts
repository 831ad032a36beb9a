import type pg from 'pg';
import {
  AppError,
  ID_PREFIX,
  getRun,
  getThread,
  insertEntry,
  insertThread,
  newId,
  resolveAgentRevision,
  takePositions,
  withTransaction,
  type Principal,
} from '../../runtime/index.js';
import type { EngineContext } from '../engine/index.js';
import { payloadWithMedia, threadForResponse, type ThreadResult } from './inbox-operations.js';
import { startRunForEntry } from './start-run.js';
import { ThreadEvents } from './thread-events.js';

/**
 * Forks a run into a new thread of the same session. The new thread's history is the run's
 * committed history: the origin thread's conversation up to where the run sealed (a run that
 * has not sealed yet contributes only what came before it). Its first input starts a run at
 * once, with lineage fork and the origin run as parent, so lineage crosses the fork.
 */
export async function forkRun(
  context: EngineContext,
  target: { workspaceId: string; runId: string; principal: Principal; requestKey: string | null },
  input: { agent_id: string; payload: Record<string, unknown> },
  onCommit: (tx: pg.PoolClient, result: ThreadResult) => Promise<void>,
  onBegin?: (tx: pg.PoolClient) => Promise<void>,
): Promise<ThreadResult> {
  const origin = await getRun(context.services.pool, target.workspaceId, target.runId);
  if (!origin) throw new AppError('not_found', 'run not found');
  const originThread = await getThread(context.services.pool, target.workspaceId, origin.thread_id);
  if (!originThread) throw new AppError('not_found', 'run not found');
  const history = originThread.message_history.slice(0, origin.history_end ?? origin.history_start);
  const events = new ThreadEvents();
  const result = await withTransaction(context.services.pool, async (tx) => {
    await onBegin?.(tx); // the folded Idempotency-Key claim, first in the transaction
    // The agent is resolved within the workspace before anything is written, like an inbox
    // input: a missing or foreign agent is 404 naming the field (spec 2.1) and an archived one
    // 409 (the composite foreign key would otherwise refuse the entry with a constraint violation).
    const resolved = await resolveAgentRevision(tx, target.workspaceId, input.agent_id, undefined, { agent: 'body.agent_id', revision: 'body.agent_id' });
    const payload = await payloadWithMedia(tx, target.workspaceId, input.payload, 'body.payload');
    const thread = await insertThread(tx, {
      id: newId(ID_PREFIX.thread),
      workspace_id: target.workspaceId,
      session_id: origin.session_id,
      labels: {},
      origin: 'fork',
      origin_run_id: origin.id,
      origin_thread_id: origin.thread_id,
      message_history: history,
    });
    const entry = await insertEntry(tx, {
      id: newId(ID_PREFIX.inboxEntry),
      workspace_id: target.workspaceId,
      thread_id: thread.id,
      kind: 'message',
      delivery: 'queue',
      position: await takePositions(tx, thread.id, 1),
      payload,
      options: {},
      agent_id: input.agent_id,
      agent_revision_id: null,
      principal_id: target.principal.id,
      origin_run_id: origin.id,
      request_key: target.requestKey,
    });
    const started = await startRunForEntry(tx, thread, entry, context.services.config.worker.max_attempts, resolved);
    // The response carries the new thread whole (its copied history read once, here); the
    // stream event carries its state.
    const value: ThreadResult = { entry: started.entry, run: started.run, thread: await threadForResponse(tx, started.thread) };
    await onCommit(tx, value);
    return { value, state: started.thread };
  });
  events.entry(result.value.entry).run(result.value.run!).thread(result.state);
  await events.publish(context, result.state.id);
  return result.value;
}
