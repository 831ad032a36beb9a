import type pg from 'pg';
import {
  AppError,
  ID_PREFIX,
  inFlight,
  insertRun,
  newId,
  publishEvent,
  resolveAgentRevision,
  resolveMemoryMounts,
  runView,
  setThreadRuns,
  updateEntry,
  type InboxEntry,
  type ReadCaches,
  type RunClaim,
  type RunRow,
  type ThreadState,
} from '../../runtime/index.js';
import { CHANNEL_RUN_ACCEPTED, effectiveConfig, runMountInputs, type RunOptions } from '../engine/index.js';

/** What starting a run reads of its entry (all of it known before the entry's row is read back). */
export type StartingEntry = Pick<InboxEntry, 'id' | 'payload' | 'options' | 'agent_id' | 'agent_revision_id' | 'principal_id' | 'origin_run_id' | 'assigned_run_id'>;

export interface StartedRun<E extends StartingEntry = InboxEntry> {
  run: RunRow;
  /** The entry, assigned to the run (as given when it was inserted assigned already). */
  entry: E | InboxEntry;
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
export async function startRunForEntry<E extends StartingEntry>(
  tx: pg.PoolClient,
  thread: ThreadState,
  entry: E,
  maxAttempts: number,
  resolved?: ResolvedRevision,
  runId: string = newId(ID_PREFIX.run),
  caches?: ReadCaches,
  /** Called once the run's statements are issued: what it issues follows them, same round trip. */
  issued?: () => void,
  /** A slot of this process's worker (LocalClaims): the run is inserted claimed by it, and no NOTIFY is sent. */
  claim?: RunClaim | null,
): Promise<StartedRun<E>> {
  const { agent, revision } = resolved ?? (await resolveAgentRevision(tx, thread.workspace_id, entry.agent_id, entry.agent_revision_id ?? undefined));
  const options = entry.options as RunOptions;
  const config = effectiveConfig(revision.config as Record<string, unknown>, options);
  // The run records its mounts resolved now (spec 2.5): a memory deleted since the input was
  // accepted fails the entry with not_found instead of starting a run that cannot use it.
  const memoryMounts = await resolveMemoryMounts(tx, thread.workspace_id, runMountInputs(config, options, 'config', 'options'));
  // The NOTIFY that wakes workers is sent by the insert itself; PostgreSQL delivers it only
  // when this transaction commits. A run claimed by this transaction (claim) wakes nobody: it
  // commits running, leased to the local worker that reserved the slot.
  // The run insert, the entry's assignment, the thread update and the event travel together
  // (one round trip, the pool pipelines; none needs another's answer), in this order: the
  // thread's current_run_id names a run inserted by an earlier statement of the pipeline.
  const inserting = inFlight(insertRun(tx, {
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
  }, claim ? undefined : CHANNEL_RUN_ACCEPTED, claim));
  // An entry inserted for this very run is born assigned (no statement on the inbox path).
  const assigning = inFlight<E | InboxEntry>(entry.assigned_run_id === runId ? Promise.resolve(entry) : updateEntry(tx, entry.id, { status: 'assigned', assigned_run_id: runId }));
  const advancing = inFlight(setThreadRuns(tx, thread.id, runId));
  const announcing = inFlight(publishEvent(tx, { workspace_id: thread.workspace_id, type: 'run.accepted', data: inserting.then((run) => ({ run: runView(run) })) }, { caches }));
  issued?.();
  const [run, assigned, after] = await Promise.all([inserting, assigning, advancing, announcing]);
  return { run, entry: assigned, thread: after };
}

/** An entry whose agent cannot start (archived, deleted revision) fails instead of blocking the thread. */
export async function failEntry(tx: pg.PoolClient, entry: InboxEntry, error: unknown): Promise<InboxEntry> {
  const failure = error instanceof AppError ? { code: error.code, message: error.message } : { code: 'internal', message: 'the input could not start a run' };
  return updateEntry(tx, entry.id, { status: 'failed', failure, finished: true });
}
