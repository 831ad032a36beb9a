import type pg from 'pg';
import {
  AppError,
  checkInputMedia,
  ID_PREFIX,
  entryView,
  getRunById,
  getEntry,
  getThreadForView,
  resolveAgentRevision,
  resolveMemoryMounts,
  insertEntry,
  lockThread,
  newId,
  publishEvent,
  enqueueOnThread,
  runView,
  lockThreadTakingPosition,
  updateEntry,
  validateAgentConfig,
  withMediaFacts,
  withTransaction,
  inFlight,
  isCachedPlanChanged,
  pgCode,
  PG_DEADLOCK_DETECTED,
  PG_SERIALIZATION_FAILURE,
  PG_UNIQUE_VIOLATION,
  subscriptionsWanting,
  type StatementKey,
  type StatementKeyRefusal,
  type InboxEntry,
  type Principal,
  type Queryable,
  type ReadCaches,
  type RunRow,
  type ThreadRow,
  type ThreadWithHistory,
  type ThreadState,
  type EnqueueStatementInput,
  type HistoryPrefix,
  JsonArrayText,
} from '../../runtime/index.js';
import { CHANNEL_RUN_ACCEPTED, CHANNEL_STEER, effectiveConfig, LocalClaims, runMountInputs, type EngineContext, type LocalClaim, type RunOptions } from '../engine/index.js';
import { startRunForEntry, type ResolvedRevision } from './start-run.js';
import { ThreadEvents } from './thread-events.js';

export interface InputRequest {
  agent_id: string;
  agent_revision_id?: string | undefined;
  kind?: string | undefined;
  delivery?: 'queue' | 'steer' | undefined;
  payload: Record<string, unknown>;
  options?: Record<string, unknown> | undefined;
}

export interface ThreadResult {
  entry: InboxEntry;
  run: RunRow | null;
  /** The whole thread, history included: the responses carry the spec's thread. */
  thread: ThreadWithHistory;
}

/**
 * The whole thread as the operation's transaction leaves it, for its response: the one read of
 * message_history in an operation whose locks and updates read the state only. The caller
 * holds the row lock, so this is the committed result.
 */
export async function threadForResponse(tx: Queryable, thread: ThreadState): Promise<ThreadWithHistory> {
  // An empty history needs no read: message_count is the history's length, kept by a trigger on
  // the same row this state was read from under the lock (a thread's first input, every fork
  // that copies nothing).
  if (thread.message_count === 0) return { ...thread, message_history: [] };
  return (await getThreadForView(tx, thread.workspace_id, thread.id))!;
}

/**
 * Refuses an input that could never start, at the time it is sent rather than when its turn
 * comes: the agent (and pinned revision) must exist in the workspace and not be archived, and
 * overrides must make a valid configuration with the revision's, whose references (model,
 * reviewer model, skills…) name resources of the workspace (404 otherwise, spec 2.1). The
 * overrides are applied key by key, so only their own fields can fail here: the revision's
 * were validated when it was published.
 */
async function checkInput(tx: Queryable, workspaceId: string, input: InputRequest, caches?: ReadCaches): Promise<ResolvedRevision> {
  // Head and revision through the read cache: a head archived elsewhere is seen within the
  // pub/sub delay (ReadCaches), revisions never change.
  const resolved = await resolveAgentRevision(tx, workspaceId, input.agent_id, input.agent_revision_id ?? undefined, { agent: 'body.agent_id', revision: 'body.agent_revision_id' }, caches);
  // Overrides replace whole configuration keys, so the configuration the run would execute is
  // validated as a revision's would be (toolset and tool names, references, schemas): an
  // override the run could not honour is refused now instead of being skipped later.
  const options = (input.options as RunOptions | undefined) ?? {};
  const overrides = options.overrides;
  if (overrides && Object.keys(overrides).length > 0) {
    await validateAgentConfig(tx, workspaceId, effectiveConfig(resolved.revision.config as Record<string, unknown>, { overrides }), 'body.options.overrides');
  }
  // Mounts given with the input must name memories of this workspace (404 naming the field),
  // checked now also for an input that waits in the queue.
  if (options.memory_mounts?.length) {
    const config = effectiveConfig(resolved.revision.config as Record<string, unknown>, options);
    await resolveMemoryMounts(tx, workspaceId, runMountInputs(config, options, 'config', 'body.options'));
  }
  return resolved;
}

/**
 * The payload as an entry stores it: its media parts checked for new use (assets of the
 * workspace, not retired, of the part's kind) and given their assets' facts.
 */
export async function payloadWithMedia(tx: Queryable, workspaceId: string, payload: Record<string, unknown>, field: string): Promise<Record<string, unknown>> {
  const facts = await checkInputMedia(tx, workspaceId, payload.content, `${field}.content`);
  if (facts.size === 0) return payload;
  return { ...payload, content: withMediaFacts(payload.content as Array<Record<string, unknown>>, facts) };
}

/** Loads and locks the thread, without its history (404 when missing or in another workspace). */
export async function lockThreadOr404(tx: Queryable, workspaceId: string, threadId: string): Promise<ThreadState> {
  const thread = await lockThread(tx, workspaceId, threadId);
  if (!thread) throw new AppError('not_found', 'thread not found');
  return thread;
}

/**
 * The request's Idempotency-Key as the one-statement path records it (api/framework's
 * FoldedIdempotency): the statement takes the key's lock and writes the record itself.
 */
export interface InputKey {
  readonly statementKey: StatementKey;
  /**
   * The statement's key gate stayed closed (nothing was written): throws the key's answer — 409
   * for a twin in flight, 422 for another request under the key, the stored response for a
   * completed twin — or resolves when only the transactional path can decide (a claim row of
   * a previous release, live or stale).
   */
  refused(refusal: StatementKeyRefusal, db: Queryable): Promise<void>;
  /** The statement committed the record with the effect. */
  recorded(): void;
}

/**
 * Queues an input on a thread through its actor. Position = the thread's next position, taken
 * under the thread row lock: positions are gap-free and follow arrival (commit) order
 * (RUNS.md invariant 1). An idle thread starts a run for the entry at once; a steer entry on a
 * thread whose run is executing waits for that run's next model request (workers are told by
 * NOTIFY); anything else waits in position order. `onCommit` runs inside the transaction, so
 * the Idempotency-Key record commits with the entry; `onBegin` runs first in it (the folded
 * claim, see api/framework/idempotency.ts).
 *
 * With `key` given (null: the request has none), a checked input on a workspace without a
 * webhook subscription to run.accepted takes the one-statement path instead: no transaction
 * block, the key recorded by the statement itself; onBegin and onCommit are then not called
 * and the caller builds its response from the result.
 */
export async function enqueueInput(
  context: EngineContext,
  target: EnqueueTarget,
  input: InputRequest,
  onCommit: (tx: pg.PoolClient, result: ThreadResult) => Promise<void>,
  onBegin?: (tx: pg.PoolClient) => Promise<void>,
  key?: InputKey | null,
): Promise<ThreadResult> {
  // What the input needs checked does not depend on the thread's state, so it is checked before
  // the transaction (reads of the read cache, and of the database only for what the cache does
  // not hold or for media and memory mounts): the transaction is then one round trip and a
  // commit. An input that fails a check takes the step-by-step path, which checks again inside
  // its transaction and answers in the contract's order (the key's replay or 409 before any
  // 404 of the body; the thread's 404 before the agent's).
  const checked = await checkBeforeTransaction(context, target, input).catch(() => null);
  // A webhook for run.accepted needs an outbox row made from the new run: the transactional path.
  if (checked && key !== undefined && (await subscriptionsWanting(context.services.caches, context.services.pool, target.workspaceId, 'run.accepted')).length === 0) {
    const done = await context.actors.run(target.threadId, () => enqueueInOneStatement(context, target, checked, key));
    if (done !== FALL_BACK) return done;
  }
  if (checked) return context.actors.run(target.threadId, () => enqueueChecked(context, target, checked, onCommit, onBegin));
  return enqueueStepByStep(context, target, input, onCommit, onBegin);
}

type EnqueueTarget = { workspaceId: string; threadId: string; principal: Principal; requestKey: string | null };

/** An input with everything the one-statement path needs, checked as checkInput would. */
interface CheckedInput {
  input: InputRequest;
  options: RunOptions;
  payload: Record<string, unknown>;
  resolved: ResolvedRevision;
  config: Record<string, unknown>;
  memoryMounts: unknown[];
}

async function checkBeforeTransaction(context: EngineContext, target: EnqueueTarget, input: InputRequest): Promise<CheckedInput> {
  const { pool, caches } = context.services;
  const resolved = await checkInput(pool, target.workspaceId, input, caches);
  const payload = await payloadWithMedia(pool, target.workspaceId, input.payload, 'body.payload');
  // What startRunForEntry resolves for the run an idle thread starts (unused if it is busy).
  const options = (input.options as RunOptions | undefined) ?? {};
  const config = effectiveConfig(resolved.revision.config as Record<string, unknown>, options);
  const memoryMounts = await resolveMemoryMounts(pool, target.workspaceId, runMountInputs(config, options, 'config', 'options'));
  return { input, options, payload, resolved, config, memoryMounts };
}

const FALL_BACK = Symbol('fall back to the transactional path');

/**
 * The inbox POST as ONE statement, its own implicit transaction: the key (when given) and the
 * effect commit together in a single round trip (enqueueOnThread documents the gate). Returns
 * FALL_BACK, having written nothing, when the transactional path must answer instead: the
 * statement failed on a record that a twin committed after its snapshot (23505) or on a
 * serialization or deadlock failure, its cached plan went stale after a schema change, or the
 * key has a claim row of a previous release. The caller then runs enqueueChecked, which
 * answers from a fresh look at the key.
 */
async function enqueueInOneStatement(context: EngineContext, target: EnqueueTarget, checked: CheckedInput, key: InputKey | null): Promise<ThreadResult | typeof FALL_BACK> {
  const local = new LocalClaims();
  const statement = statementInput(context, target, checked, local);
  let done: Awaited<ReturnType<typeof enqueueOnThread>>;
  try {
    // Alone or with other POSTs of this tick in one statement (EnqueueBatcher): the answer is
    // this input's either way, and an error is this input's own statement's.
    // The speculation starts once the statement is written (EnqueueBatcher's `sent`).
    done = await context.services.enqueues.enqueue({ ...statement, key: key?.statementKey ?? null, sent: speculation(local, statement) });
  } catch (error) {
    local.settle(null);
    const code = pgCode(error);
    if (isCachedPlanChanged(error) || code === PG_UNIQUE_VIOLATION || code === PG_SERIALIZATION_FAILURE || code === PG_DEADLOCK_DETECTED) return FALL_BACK;
    throw error;
  }
  if (done && 'refused' in done) {
    local.settle(null);
    await key!.refused(done.refused, context.services.pool);
    return FALL_BACK;
  }
  if (!done) {
    local.settle(null);
    throw new AppError('not_found', 'thread not found');
  }
  key?.recorded();
  context.services.histories.remember(target.threadId, done.history);
  const value: ThreadResult = { entry: done.entry, run: done.run, thread: { ...done.thread, message_history: done.history } };
  return afterCommit(context, target.threadId, local, { value, state: done.thread });
}

/** What enqueueOnThread is given for a checked input (the key apart). */
function statementInput(context: EngineContext, target: EnqueueTarget, checked: CheckedInput, local: LocalClaims): EnqueueStatementInput {
  const { input, options, resolved } = checked;
  return {
    workspace_id: target.workspaceId,
    thread_id: target.threadId,
    entry_id: newId(ID_PREFIX.inboxEntry),
    kind: input.kind ?? 'message',
    delivery: input.delivery ?? 'queue',
    payload: checked.payload,
    options: input.options ?? {},
    agent_id: input.agent_id,
    agent_revision_id: input.agent_revision_id ?? null,
    principal_id: target.principal.id,
    request_key: target.requestKey,
    run: {
      id: newId(ID_PREFIX.run),
      agent_revision_id: resolved.revision.id,
      max_attempts: context.services.config.worker.max_attempts,
      labels: options.labels ?? {},
      config: checked.config,
      memory_mounts: checked.memoryMounts,
    },
    accepted_channel: CHANNEL_RUN_ACCEPTED,
    steer_channel: CHANNEL_STEER,
    claim: local.reserve(context, target.threadId),
    history_prefix: context.services.histories.get(target.threadId),
  };
}

/**
 * Starts the attempt of the run the statement is about to insert, before its commit (the
 * worker host's SpeculativeAttempt), when this process holds the thread's whole history as it
 * was last left here (a seal or a read here, or the thread's creation): that run is then known
 * to the field — unless the thread is busy, or its history grew elsewhere, or the statement
 * fails, in which case the claim's settle cancels the speculation and nothing it did is kept.
 * The values are given as the database will return them (JSON), so the attempt is the one
 * the committed run would have started.
 */
function speculate(local: LocalClaims, input: EnqueueStatementInput): void {
  // After the statement has left (its write is flushed at the end of this turn of the loop),
  // so preparing the attempt never delays it; a claim settled by then declines (speculate).
  const start = speculation(local, input);
  if (start) setImmediate(start);
}

/**
 * The input's speculation as a function to call once its statement has been written (at most
 * once, however often it is called); undefined when there is nothing to speculate.
 */
function speculation(local: LocalClaims, input: EnqueueStatementInput): (() => void) | undefined {
  const claim = local.claim;
  const held = input.history_prefix;
  if (!claim?.speculate || !held) return undefined;
  let started = false;
  return () => {
    if (started) return;
    started = true;
    speculateNow(claim, input, held);
  };
}

function speculateNow(claim: LocalClaim, input: EnqueueStatementInput, held: HistoryPrefix): void {
  if (!claim.speculate) return;
  const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  const now = new Date().toISOString();
  const run: RunRow = {
    id: input.run.id, workspace_id: input.workspace_id, session_id: '', thread_id: input.thread_id, agent_id: input.agent_id,
    agent_revision_id: input.run.agent_revision_id, revision_selection: input.agent_revision_id === null ? 'default' : 'pinned', status: 'running',
    wait_reason: null, trigger: 'input', lineage: 'root', parent_run_id: null, source_entry_id: input.entry_id, principal_id: input.principal_id,
    resumed_by_id: null, attempts: 1, charged_attempts: 0, max_attempts: input.run.max_attempts, current_attempt_id: claim.attemptId,
    lease_owner: claim.workerId, lease_expires_at: null, created_at: now, started_at: now, sealed_at: null, cancel_requested_at: null, updated_at: now,
    display_position: '0', labels: json(input.run.labels), input: json(input.payload), output: null, failure: null, environment_mounts: [],
    memory_mounts: json(input.run.memory_mounts), memory_sources: {}, options: json(input.options), config: json(input.run.config), pending: null,
    resume: null, usage: { requests: 0, input_tokens: 0, output_tokens: 0 }, usage_at_seal: null, checkpoint_seq: 0, checkpoint_key: null,
    next_ordinal: 1, history_start: held.count, history_end: null, version: 1,
  };
  claim.speculate(run, held.count > 0 ? new JsonArrayText(held.text, held.count) : undefined);
}

/**
 * The inbox POST as one statement on the thread (enqueueOnThread), pipelined after the BEGIN
 * and the Idempotency-Key's statements: one round trip, then the key's record with the COMMIT.
 * Same outcome as enqueueStepByStep for a checked input; the invariants are enforced in the
 * statement (runtime/stores/enqueue-input.ts).
 */
async function enqueueChecked(
  context: EngineContext,
  target: EnqueueTarget,
  checked: CheckedInput,
  onCommit: (tx: pg.PoolClient, result: ThreadResult) => Promise<void>,
  onBegin?: (tx: pg.PoolClient) => Promise<void>,
): Promise<ThreadResult> {
  // Reserved before the statement learns whether the thread is idle: released at settle when
  // the input started no run (the thread was busy) or the transaction did not commit.
  const local = new LocalClaims();
  const result = await withTransaction(context.services.pool, async (tx) => {
    // Key first, then the thread's row lock, on the wire in this order (see enqueueStepByStep).
    const begun = inFlight(onBegin ? onBegin(tx) : Promise.resolve());
    const statement = statementInput(context, target, checked, local);
    const enqueuing = inFlight(enqueueOnThread(tx, statement));
    speculate(local, statement);
    await begun;
    const done = await enqueuing;
    if (!done) throw new AppError('not_found', 'thread not found');
    // No key is given to the statement here (onBegin took it): its gate cannot stay closed.
    if ('refused' in done) throw new Error('the inbox statement refused a key it was not given');
    // Committed messages (only a seal, holding this lock, appends): true whether or not this commits.
    context.services.histories.remember(target.threadId, done.history);
    if (done.run) await publishEvent(tx, { workspace_id: target.workspaceId, type: 'run.accepted', data: { run: runView(done.run) } }, { caches: context.services.caches });
    const value: ThreadResult = { entry: done.entry, run: done.run, thread: { ...done.thread, message_history: done.history } };
    await onCommit(tx, value);
    return { value, state: done.thread };
  }).catch((error: unknown) => {
    local.settle(null);
    throw error;
  });
  return afterCommit(context, target.threadId, local, result);
}

/** Queues the operation's events, starts a run claimed here, then waits for the events' XADD. */
async function afterCommit(context: EngineContext, threadId: string, local: LocalClaims, result: { value: ThreadResult; state: ThreadState }): Promise<ThreadResult> {
  const events = new ThreadEvents().entry(result.value.entry);
  // thread.changed carries the state (no history), not the response's whole thread.
  if (result.value.run) events.run(result.value.run).thread(result.state);
  // The events are queued on the bus before the attempt can publish anything (its first
  // publish follows an await), so the stream shows the run's status before its items.
  // The attempt starts before the answer waits for its events' XADD (measured against starting
  // it after the 201: the first delta ~0.8 ms sooner, the 201 ~1.9 ms later; bench/RESULTS.md).
  const publishing = events.publish(context, threadId);
  // The response's thread is the history as this transaction locked it: the run's start. An
  // input starts a run only on an idle thread, which has no pending entry (they start in
  // position order as the thread frees up), so no steer entry waited for this run at its commit.
  local.settle(result.value.run, result.value.thread.message_history, true);
  await publishing;
  return result.value;
}

/**
 * The inbox POST statement by statement: the key, the thread's lock, the input's checks inside
 * the transaction, then the entry and, on an idle thread, its run. Taken by an input that failed
 * a check before the transaction, so that its error is the one this order gives.
 */
function enqueueStepByStep(
  context: EngineContext,
  target: EnqueueTarget,
  input: InputRequest,
  onCommit: (tx: pg.PoolClient, result: ThreadResult) => Promise<void>,
  onBegin?: (tx: pg.PoolClient) => Promise<void>,
): Promise<ThreadResult> {
  return context.actors.run(target.threadId, async () => {
    // Role all: a free slot of this process's worker host, reserved when the input starts a run,
    // so that the run commits claimed (RunClaim) and its attempt starts right after the commit.
    const local = new LocalClaims();
    const result = await withTransaction(context.services.pool, async (tx) => {
      // One round trip with the BEGIN (the pool pipelines): the request's Idempotency-Key is
      // taken first, in this same transaction (one commit per POST), then the thread row is
      // locked. Statement order keeps the lock order (the key's advisory lock, then the row) and
      // the key is only ever try-locked, so a twin in flight is refused (409) without any wait
      // on the key; it is answered once the row lock is granted, which the twin releases when
      // its short transaction ends. A replay or a refusal rolls the position back.
      // onBegin issues its statements before its first await, so they precede the lock on the wire.
      const begun = inFlight(onBegin ? onBegin(tx) : Promise.resolve());
      // Locks the thread and takes the position in one statement: positions are assigned under
      // the thread row lock, so they are gap-free and follow commit order. A refused input
      // rolls the increment back with everything else. The statement returns the state, not
      // the history: the history is read once, for the response, at the end.
      const locking = inFlight(lockThreadTakingPosition(tx, target.workspaceId, target.threadId));
      await begun;
      const locked = await locking;
      if (!locked) throw new AppError('not_found', 'thread not found');
      const { position } = locked;
      let thread = locked.thread;
      const resolved = await checkInput(tx, target.workspaceId, input, context.services.caches);
      const payload = await payloadWithMedia(tx, target.workspaceId, input.payload, 'body.payload');
      // An idle thread starts a run for this entry at once: the entry is inserted assigned to
      // the run id chosen here, which the run is then created with.
      const runId = thread.current_run_id === null ? newId(ID_PREFIX.run) : undefined;
      // The entry, and for an idle thread its run, the thread's update and the run's event, in
      // one round trip: the run is built from what the entry is inserted with, not from its row.
      const entryId = newId(ID_PREFIX.inboxEntry);
      const inserting = inFlight(insertEntry(tx, {
        id: entryId,
        workspace_id: target.workspaceId,
        thread_id: thread.id,
        kind: input.kind ?? 'message',
        delivery: input.delivery ?? 'queue',
        position,
        payload,
        options: input.options ?? {},
        agent_id: input.agent_id,
        agent_revision_id: input.agent_revision_id ?? null,
        principal_id: target.principal.id,
        origin_run_id: null,
        request_key: target.requestKey,
        ...(runId ? { assigned_run_id: runId } : {}),
      }));
      let run: RunRow | null = null;
      let entry: InboxEntry;
      // The whole thread for the response, read behind this operation's writes in the same round
      // trip (an empty history needs no read, see threadForResponse).
      let reading: Promise<ThreadWithHistory | null> | null = null;
      const readForResponse = (): void => {
        if (thread.message_count > 0) reading = inFlight(getThreadForView(tx, target.workspaceId, thread.id));
      };
      if (runId) {
        // The run is built from what the entry is inserted with (its statement is still in flight).
        const planned = { id: entryId, payload, options: input.options ?? {}, agent_id: input.agent_id, agent_revision_id: input.agent_revision_id ?? null, principal_id: target.principal.id, origin_run_id: null, assigned_run_id: runId };
        const started = await startRunForEntry(tx, thread, planned, context.services.config.worker.max_attempts, resolved, runId, context.services.caches, readForResponse, local.reserve(context));
        entry = await inserting;
        run = started.run;
        thread = started.thread;
      } else {
        readForResponse();
        entry = await inserting;
      }
      if (!run && entry.delivery === 'steer' && thread.current_run_id !== null) {
        const current = await getRunById(tx, thread.current_run_id);
        // An accepted run is notified too, as the one-statement path does: a worker's claim
        // that did not see this entry reads no steer entries at the run's start (claimRuns).
        if (current?.status === 'running' || current?.status === 'accepted') await tx.query('select pg_notify($1, $2)', [CHANNEL_STEER, current.id]);
      }
      const read = reading ? await reading : null;
      const value = { entry, run, thread: read ?? (await threadForResponse(tx, thread)) };
      await onCommit(tx, value);
      return { value, state: thread };
    }).catch((error: unknown) => {
      local.settle(null);
      throw error;
    });
    return afterCommit(context, target.threadId, local, result);
  });
}

/**
 * Withdraws a pending entry: it becomes a tombstone (status withdrawn) that keeps its request
 * key, so a replayed request is still recognised. Only a pending entry can be withdrawn.
 */
export function withdrawEntry(
  context: EngineContext,
  target: { workspaceId: string; threadId: string; entryId: string },
  precondition: (entry: { id: string; version: number }) => void,
): Promise<ThreadResult> {
  return context.actors.run(target.threadId, async () => {
    const result = await withTransaction(context.services.pool, async (tx) => {
      const thread = await lockThreadOr404(tx, target.workspaceId, target.threadId);
      const entry = await getEntry(tx, target.workspaceId, target.entryId);
      if (!entry || entry.thread_id !== thread.id) throw new AppError('not_found', 'inbox entry not found');
      precondition(entry);
      if (entry.status !== 'pending') throw new AppError('conflict', `only a pending entry can be withdrawn; this one is ${entry.status}`, { details: { status: entry.status } });
      const withdrawn = await updateEntry(tx, entry.id, { status: 'withdrawn', finished: true });
      await publishEvent(tx, { workspace_id: withdrawn.workspace_id, type: 'entry.withdrawn', data: { entry: entryView(withdrawn) } }, { caches: context.services.caches });
      const run = thread.current_run_id ? await getRunById(tx, thread.current_run_id) : null;
      return { entry: withdrawn, run, thread: await threadForResponse(tx, thread) };
    });
    await new ThreadEvents().entry(result.entry).publish(context, target.threadId);
    return result;
  });
}
