import type pg from 'pg';
import {
  AppError,
  ID_PREFIX,
  insertRun,
  newId,
  publishEvent,
  resolveAgentRevision,
  resolveMemoryMounts,
  runView,
  setThreadRuns,
  updateEntry,
  type InboxEntry,
  type RunRow,
  type ThreadState,
} from '../../runtime/index.js';
import { CHANNEL_RUN_ACCEPTED, effectiveConfig, runMountInputs, type RunOptions } from '../engine/index.js';

export interface StartedRun {
  run: RunRow;
  entry: InboxEntry;
  /** The thread after the run took it (without its history). */
  thread: ThreadState;
}

export type ResolvedRevision = Awaited<ReturnType<typeof resolveAgentRevision>>;

/**
 * Starts a run for a pending entry of an idle thread (caller holds the thread lock and has
 * checked thread.current_run_id is null). The run pins the exact revision it starts with; the
 * entry becomes assigned; the thread's current run is set; workers are woken by a NOTIFY that
 * PostgreSQL delivers only when this transaction commits.
 */
export async function startRunForEntry(
  tx: pg.PoolClient,
  thread: ThreadState,
  entry: InboxEntry,
  maxAttempts: number,
  resolved?: ResolvedRevision,
  runId: string = newId(ID_PREFIX.run),
): Promise<StartedRun> {
  const { agent, revision } = resolved ?? (await resolveAgentRevision(tx, thread.workspace_id, entry.agent_id, entry.agent_revision_id ?? undefined));
  const options = entry.options as RunOptions;
  const config = effectiveConfig(revision.config as Record<string, unknown>, options);
  // The run records its mounts resolved now (spec 2.5): a memory deleted since the input was
  // accepted fails the entry with not_found instead of starting a run that cannot use it.
  const memoryMounts = await resolveMemoryMounts(tx, thread.workspace_id, runMountInputs(config, options, 'config', 'options'));
  // The NOTIFY that wakes workers is sent by the insert itself; PostgreSQL delivers it only
  // when this transaction commits.
  const run = await insertRun(tx, {
    id: runId,
    workspace_id: thread.workspace_id,
    session_id: thread.session_id,
    thread_id: thread.id,
    agent_id: agent.id,
    agent_revision_id: revision.id,
    revision_selection: entry.agent_revision_id ? 'pinned' : 'default',
    trigger: 'input',
    // an entry created by a fork (or a subagent call) starts the new thread's first run,
    // continuing the origin run's lineage
    lineage: entry.origin_run_id ? (thread.origin === 'subagent' ? 'subagent' : 'fork') : 'root',
    parent_run_id: entry.origin_run_id,
    source_entry_id: entry.id,
    principal_id: entry.principal_id,
    max_attempts: maxAttempts,
    labels: options.labels ?? {},
    input: entry.payload,
    options: entry.options,
    config,
    resume: null,
    memory_mounts: memoryMounts,
  }, CHANNEL_RUN_ACCEPTED);
  // An entry inserted for this very run is born assigned (saves a round trip on the inbox path).
  const assigned = entry.assigned_run_id === run.id ? entry : await updateEntry(tx, entry.id, { status: 'assigned', assigned_run_id: run.id });
  const after = await setThreadRuns(tx, thread.id, run.id);
  await publishEvent(tx, { workspace_id: run.workspace_id, type: 'run.accepted', data: { run: runView(run) } });
  return { run, entry: assigned, thread: after };
}

/** An entry whose agent cannot start (archived, deleted revision) fails instead of blocking the thread. */
export async function failEntry(tx: pg.PoolClient, entry: InboxEntry, error: unknown): Promise<InboxEntry> {
  const failure = error instanceof AppError ? { code: error.code, message: error.message } : { code: 'internal', message: 'the input could not start a run' };
  return updateEntry(tx, entry.id, { status: 'failed', failure, finished: true });
}
