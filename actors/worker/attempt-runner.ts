import {
  backgroundLane,
  AppError,
  deleteInlineCheckpoint,
  externalizeLargeContent,
  INLINE_CHECKPOINT_PREFIX,
  getRunById,
  handOffRun,
  insertOutboxRow,
  isDatabaseUnavailable,
  pendingSteerEntries,
  renewLease,
  runView,
  type RunRow,
  type JsonArray,
} from '../../runtime/index.js';
import { forEachAttemptMessage, type AttemptMessage, type AttemptPool, type AttemptPost, type AttemptStart, type DoneMessage, type HostChannel } from '../attempt/index.js';
import { CHANNEL_RUN_ACCEPTED, type EngineContext } from '../engine/index.js';
import { sealAndAdvance } from '../threads/index.js';
import { packDisplayPages, PAGE_ITEMS } from './display-pages.js';
import { HOST_OPERATIONS, hostRequestContext, serveHostRequest } from './host-requests/index.js';
import { LiveTail } from './live-tail.js';
import { prepareAttempt } from './prepare-attempt.js';
import type { SpeculativeAttempt } from './speculative-attempt.js';
import { modelFailure, type ModelSources } from './run-models.js';
import { commitEndingStepIn, commitStep, commitStepIn, writeCheckpoint, type StepCommit } from './step-commit.js';

/**
 * The reason every attempt's `ended` signal aborts with: created once, because abort() without
 * a reason builds a DOMException (with its stack) per attempt — 0.7 % of the `all` process's
 * main thread under 32 clients (bench/RESULTS.md session 12). Same name and type as that one.
 */
const ATTEMPT_ENDED = new DOMException('the attempt ended', 'AbortError');

/**
 * Hosts one attempt of one run: feeds the Piscina task, turns its messages into stream events,
 * committed steps and finally the run's seal. Messages are handled strictly in order, one at a
 * time. Every database write is fenced by this attempt's id; the first write that matches no row
 * means the lease is lost — the attempt is aborted and nothing more is written (RUNS.md 2).
 * A database that is briefly unavailable (restart, failover) is waited out: heartbeats keep
 * trying, and step commits, seals and handoffs are retried with backoff for up to one lease
 * length (each retry stays fenced, so retrying can never write for a lost lease). Beyond that,
 * or on any other failure, the attempt is abandoned and the run continues after its lease
 * expires, from its last committed checkpoint.
 */
export class AttemptRunner {
  private queue: Promise<void> = Promise.resolve();
  /** Port messages received and not yet handled, in order: a checkpoint looks at what follows it. */
  private readonly received: AttemptMessage[] = [];
  /** The run's last step, held back to commit in the seal's transaction. */
  private finalStep: StepCommit | null = null;
  /**
   * Whether the run may point to a checkpoint: it did when claimed, or a step of this attempt
   * committed one since (only this attempt moves the pointer while it holds the run). An ending
   * step then releases it (commitEndingStepIn); without one, it folds into the seal.
   */
  private checkpointed: boolean;
  private port: HostChannel | null = null;
  private lost = false;

  /**
   * The attempt ended by sealing its run (or handing it off): the run is no longer this
   * worker's to take again. Otherwise (lease or session lost, abandoned) the run may be
   * requeued for any worker, this one included.
   */
  get settledRun(): boolean {
    return !this.lost && this.outcome !== 'lost';
  }
  private finished = false;
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly sentSteer = new Set<string>();
  /** deliverSteer was asked (a NOTIFY, the listener's reconnect) before the port was open. */
  private steerAskedEarly = false;
  private readonly tail: LiveTail;
  private resolveDone!: () => void;
  private readonly startedAt = performance.now();
  private outcome = 'lost';
  private readonly leaseMs: number;
  private offStore: () => void = () => undefined;
  /** Aborted when the attempt ends: host requests still running (a command) stop with it. */
  private readonly ended = new AbortController();
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(
    private readonly context: EngineContext,
    private readonly models: ModelSources,
    private readonly pool: AttemptPool,
    readonly run: RunRow,
    /** The run's running status is on the stream already (claimed at acceptance, see WorkerHost.reserve). */
    private readonly announced = false,
    /** The thread's history as the accepting transaction locked it, when it read it (prepareAttempt). */
    private readonly history?: JsonArray,
    /** Started on an idle thread: no steer entry was pending at its commit (LocalClaim.start). */
    private readonly idleThread = false,
    /** The attempt started before the commit for exactly this run (WorkerHost.reserve), to adopt. */
    private readonly speculation?: SpeculativeAttempt,
  ) {
    this.tail = new LiveTail(context.bus, run.id, run.thread_id, run.attempts);
    this.checkpointed = run.checkpoint_key !== null;
    this.leaseMs = context.services.config.worker.authority_seconds * 1000;
  }

  private get attemptId(): string {
    return this.run.current_attempt_id!;
  }

  /** Never rejects: a start that fails abandons the attempt (the lease expiry retries the run). */
  async start(): Promise<void> {
    try {
      await this.begin();
    } catch (error) {
      this.context.services.logger.error({ run_id: this.run.id, attempt_id: this.attemptId, err: error }, 'attempt start failed; the run continues after its lease expires');
      this.abandon();
    }
  }

  private async begin(): Promise<void> {
    // Events the key-value store lost are re-published as soon as it is back (LiveTail resync).
    this.offStore = this.context.services.kv.onStateChange((state) => {
      if (state === 'ready') void this.tail.storeReady().then(() => this.finished && !this.tail.pending() && this.offStore());
    });
    this.context.services.logger.info(
      { run_id: this.run.id, attempt_id: this.attemptId, attempt: this.run.attempts, thread_id: this.run.thread_id, workspace_id: this.run.workspace_id },
      'attempt started',
    );
    // Not awaited: it stays off the path to the first token, and later events of this run
    // still follow it (one Redis connection keeps command order; the memory bus is synchronous).
    if (!this.announced) void this.context.bus.publish(this.run.thread_id, [{ type: 'run.status', run_id: this.run.id, status: 'running', run: runView(this.run) }]);
    // The lease is renewed from here on, not only once the task runs: preparing can take long
    // (creating the run's environment at a vendor) and must not let the lease expire meanwhile.
    const leaseSeconds = this.context.services.config.worker.authority_seconds;
    this.heartbeat = setInterval(() => this.enqueue(() => this.renew(leaseSeconds)), Math.max(500, (leaseSeconds * 1000) / 3));
    // An attempt started before the commit (role all, SpeculativeAttempt) is adopted as it is:
    // the worker host handed it over only for the very run it was started for, after the commit.
    // Its preparation's failure is this run's (prepared from the same fields), answered as ours.
    const speculated = this.speculation ? await this.speculation.ready : false;
    if (speculated && !this.finished) {
      this.port = this.speculation!.adopt((post) => forEachAttemptMessage(post, (message) => this.onPortMessage(message)), (error) => this.taskCrashed(error));
    } else {
      const failed = this.speculation?.failure ?? undefined;
      this.speculation?.discard();
      if (this.finished || !(await this.prepareAndRun(failed))) return;
    }
    // Steer entries that were pending before the port was open. A run started on an idle thread
    // had none at its commit, and each one inserted since was announced by a NOTIFY: if one came
    // before the port (deliverSteer then only noted it), read them now, else the NOTIFYs still
    // to come deliver them — one statement per run fewer on the hot path. The listener's
    // reconnect also asks every runner (WorkerHost), which covers NOTIFYs it missed.
    if (!this.idleThread || this.steerAskedEarly) await this.deliverSteer();
  }

  /**
   * Prepares the attempt and posts it to the pool; false when it ended instead (failed, or the
   * lease was lost). `failed`: the preparation already failed (a speculated one, for this run).
   */
  private async prepareAndRun(failed?: { error: unknown }): Promise<boolean> {
    let start: AttemptStart;
    try {
      if (failed) throw failed.error;
      start = await prepareAttempt(this.context.services, this.models, this.run, { environments: this.context.environments, signal: this.ended.signal }, this.history);
    } catch (error) {
      // The database or object store is unavailable: not the run's fault; start() abandons the
      // attempt and the run is tried again after its lease (preparing is not retried in place:
      // it may have created an environment at a vendor). A family's own failure (failure_code:
      // an environment the vendor could not create) is the run's, and fails it.
      const ownFailure = error instanceof AppError && typeof error.details?.['failure_code'] === 'string';
      if (isDatabaseUnavailable(error) || (error instanceof AppError && error.code === 'unavailable' && !ownFailure)) throw error;
      const failure = error instanceof AppError ? modelFailure(error) : { code: 'internal', message: 'the attempt could not be prepared' };
      if (!this.finished) await this.seal({ type: 'done', outcome: 'failed', failure, usage: this.run.usage }, []);
      return false;
    }
    if (this.finished) return false; // the lease was lost while preparing: nothing more is written
    // A later attempt's first event anchors its tail, which raises the run's fence: from here on
    // an earlier attempt still running somewhere (a zombie) publishes nothing (PublishOptions.fence).
    if (this.run.attempts > 1) await this.context.bus.publishAnchored(this.run.thread_id, { run_id: this.run.id, attempt: this.run.attempts }, [{ type: 'tail.reset', run_id: this.run.id, ordinal: this.run.next_ordinal, attempt: this.run.attempts }]);
    const { channel, task } = this.pool.run(start);
    this.port = channel;
    // A batch is the messages of one turn of the attempt, handled one by one in their order.
    this.port.on('message', (post: AttemptPost) => forEachAttemptMessage(post, (message) => this.onPortMessage(message)));
    task.catch((error: unknown) => this.taskCrashed(error));
    return true;
  }

  /** The attempt ends on its `done` message; a task that dies first is a crashed attempt. */
  private taskCrashed(error: unknown): void {
    this.enqueue(async () => {
      if (this.finished) return;
      this.context.services.logger.error({ run_id: this.run.id, err: error }, 'attempt task crashed');
      await this.seal({ type: 'done', outcome: 'failed', failure: { code: 'attempt_crashed', message: 'the attempt stopped unexpectedly' }, usage: this.run.usage }, []);
    });
  }

  /** Host → attempt signals. */
  cancel(): void {
    this.port?.postMessage({ type: 'cancel' });
  }

  drain(): void {
    this.port?.postMessage({ type: 'drain' });
  }

  async deliverSteer(): Promise<void> {
    if (this.finished) return;
    if (!this.port) {
      // Not started yet: begin() reads them once the port is open.
      this.steerAskedEarly = true;
      return;
    }
    const entries = (await pendingSteerEntries(this.context.services.pool, this.run.thread_id)).filter((e) => !this.sentSteer.has(e.id));
    if (entries.length === 0) return;
    entries.forEach((e) => this.sentSteer.add(e.id));
    this.port.postMessage({ type: 'steer', entries: entries.map((e) => ({ id: e.id, content: ((e.payload.content as unknown[]) ?? []) as Array<Record<string, unknown>> })) });
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((error: unknown) => {
      this.context.services.logger.error({ run_id: this.run.id, err: error }, 'attempt host error');
      this.abandon();
    });
  }

  private async renew(leaseSeconds: number): Promise<void> {
    if (this.finished || this.lost) return;
    let state: Awaited<ReturnType<typeof renewLease>>;
    try {
      // Background lane: a renewal is due long before the lease ends (aging bounds its wait).
      state = await renewLease(backgroundLane(this.context.services.pool), this.run.id, this.attemptId, leaseSeconds);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      // The next heartbeat tries again. Renewing a lease that expired meanwhile is still
      // fenced: it succeeds only while no sweep has moved the run to another attempt.
      this.context.services.logger.warn({ run_id: this.run.id, err: (error as Error).message }, 'lease renewal failed: database unavailable');
      return;
    }
    if (state === 'lost') this.loseLease();
    else if (state === 'cancel') this.cancel();
  }

  private onPortMessage(message: AttemptMessage): void {
    // Host requests are served beside the ordered queue, not in it: one may take long (a
    // vendor call on the attempt's behalf) and must not hold back lease renewals or the
    // step commits behind it. Each is fenced by the lease itself (host-requests/).
    if (message.type === 'host.request') void this.answerHostRequest(message);
    else {
      this.received.push(message);
      this.enqueue(() => this.handle(this.received.shift()!));
    }
  }

  private async answerHostRequest(message: Extract<AttemptMessage, { type: 'host.request' }>): Promise<void> {
    const answer =
      this.finished || this.lost
        ? ({ ok: false, error: { code: 'lease_lost', message: 'this attempt no longer holds the run' } } as const)
        : await serveHostRequest(HOST_OPERATIONS, hostRequestContext(this.context.services, this.run, this.attemptId, this.context.environments, this.ended.signal, this.models), message.op, message.args);
    try {
      this.port?.postMessage({ type: 'host.response', id: message.id, ...answer });
    } catch {
      // The port closed after the attempt ended: nobody waits for the answer any more.
    }
  }

  private async handle(message: AttemptMessage): Promise<void> {
    if (this.finished || this.lost) return;
    switch (message.type) {
      case 'host.request':
        return this.answerHostRequest(message);
      case 'item.started':
        return this.tail.started(message.ordinal, message.item);
      case 'item.delta':
        return this.tail.delta(message.ordinal, message.delta);
      case 'item.completed':
        return this.tail.completed(message.ordinal, message.item);
      case 'checkpoint':
        return this.checkpoint(message);
      case 'done':
        return this.finish(message);
      default: {
        const never: never = message;
        throw new Error(`unknown attempt message ${JSON.stringify(never)}`);
      }
    }
  }

  private async checkpoint(message: Extract<AttemptMessage, { type: 'checkpoint' }>): Promise<void> {
    await this.tail.flush();
    // Large text goes to the object store before the commit that references it (content_refs).
    const { objects } = this.context.services;
    const items = await Promise.all(this.tail.uncommittedBelow(message.next_ordinal).map((item) => externalizeLargeContent(objects, this.run.id, item)));
    const step: StepCommit = { runId: this.run.id, threadId: this.run.thread_id, attemptId: this.attemptId, seq: message.seq, state: message.state, nextOrdinal: message.next_ordinal, usage: message.usage, items, incorporatedEntryIds: message.incorporated_entry_ids };
    // The run's last step is followed at once by its `done`: it commits in the seal's
    // transaction instead (one commit for step + seal + advance). Nothing is lost by holding it:
    // until a commit, a crash discards it either way and the next attempt continues from the
    // previous checkpoint (RUNS.md 4). A handoff is not a seal; its step commits on its own.
    const next = this.received[0];
    if (next?.type === 'done' && next.outcome !== 'handoff') {
      this.finalStep = step;
      return;
    }
    const outcome = await this.persist(() => commitStep(this.context.services, step, (tx, key) => this.releaseCheckpoint(tx, key)));
    if (!outcome.ok) return this.loseLease();
    this.stepCommitted(step);
  }

  /**
   * A replaced checkpoint goes to the cleanup outbox in the transaction that replaced it
   * (RUNS.md 5). A run only cleans up its own checkpoints: a successor starts from its waiting
   * predecessor's checkpoint object, which stays with the predecessor.
   */
  private async releaseCheckpoint(tx: import('pg').PoolClient, key: string): Promise<void> {
    // An inline one is deleted in this same transaction: it commits with the new pointer, so no
    // outbox is needed, and the outbox never sees (so never deletes) an inline checkpoint.
    if (key.startsWith(`${INLINE_CHECKPOINT_PREFIX}runs/${this.run.id}/`)) return deleteInlineCheckpoint(tx, key);
    if (key.startsWith(`runs/${this.run.id}/`)) await insertOutboxRow(tx, { kind: 'checkpoint_cleanup', workspace_id: this.run.workspace_id, payload: { key } });
  }

  private stepCommitted(step: StepCommit): void {
    this.checkpointed = true;
    this.tail.markCommitted(step.nextOrdinal);
    this.run.usage = step.usage as RunRow['usage'];
    if (step.nextOrdinal - 1 >= PAGE_ITEMS) void packDisplayPages(backgroundLane(this.context.services.pool), this.context.services.objects, this.run.id).catch(() => undefined);
  }

  private async finish(message: DoneMessage): Promise<void> {
    await this.tail.flush();
    if (message.outcome === 'handoff') {
      // The attempt row ends in the handoff's own statement (outcome handoff, not charged).
      const handed = await this.persist(() => handOffRun(this.context.services.pool, this.run.id, this.attemptId));
      if (handed) {
        this.outcome = 'handoff';
        await this.context.services.pool.query('select pg_notify($1, $2)', [CHANNEL_RUN_ACCEPTED, this.run.id]);
      }
      return this.end();
    }
    await this.seal(message, message.history_append ?? []);
  }

  private async seal(message: DoneMessage, history: unknown[]): Promise<void> {
    const status = message.outcome === 'handoff' ? 'failed' : message.outcome;
    let retried = false;
    const step = this.finalStep;
    this.finalStep = null;
    const release = (t: import('pg').PoolClient, k: string): Promise<void> => this.releaseCheckpoint(t, k);
    // A run that ends is never continued: its last step stores no checkpoint and releases the
    // one it had (commitEndingStepIn); the seal's update writes the step's columns (ending_step).
    // A waiting run's checkpoint is its successor's start.
    const ending = status === 'completed' || status === 'failed' || status === 'cancelled';
    const change = {
      status, output: message.output ?? null, failure: message.failure ?? null, wait_reason: message.wait_reason ?? null, pending: message.pending ?? null, usage: message.usage,
      ...(step && ending ? { ending_step: { next_ordinal: step.nextOrdinal } } : {}),
    };
    // Else the checkpoint object first: the pointer that the seal's transaction moves to it must
    // never name a missing object.
    const key = step && !ending ? await this.persist(() => writeCheckpoint(this.context.services, step)) : null;
    // The common ending step — no steer entry to mark, no checkpoint of the run's to release —
    // needs no statement of its own (no row lock, no separate insert): the seal's statement
    // inserts its items, fenced with the seal (FinalStepCommit.items).
    const folded = step && ending && !this.checkpointed && step.incorporatedEntryIds.length === 0;
    const commitFinalStep = folded
      ? { commit: async () => true, incorporated: [], items: step.items }
      : step && ending
      ? { commit: (tx: import('pg').PoolClient) => commitEndingStepIn(tx, step, release), incorporated: step.incorporatedEntryIds }
      : step && key
        ? { commit: async (tx: import('pg').PoolClient) => (await commitStepIn(tx, step, key, release)).ok, incorporated: step.incorporatedEntryIds }
        : undefined;
    // The seal ends this attempt's row in its own statement (sealRun), so nothing is left open
    // if the process dies right after it commits.
    let sealed = await this.persist(() => {
      const once = sealAndAdvance(this.context, this.run, this.attemptId, change, history, undefined, commitFinalStep, this.run.history_start);
      once.catch(() => (retried = true));
      return once;
    });
    // A retried seal finds the run sealed when the first try committed but its answer was lost.
    if (!sealed && retried) sealed = await this.sealedByThisAttempt();
    if (!sealed) return this.loseLease();
    if (step) this.stepCommitted(step);
    this.context.services.logger.info(
      { run_id: this.run.id, attempt_id: this.attemptId, status: sealed.status, failure_code: sealed.failure?.code, workspace_id: this.run.workspace_id },
      'run sealed',
    );
    this.context.services.metrics.runsSealed.inc({ status: sealed.status });
    // Still lost: the resync owes the stream this run's last items and its seal.
    this.tail.close([{ type: 'run.status', run_id: sealed.id, status: sealed.status, run: runView(sealed) }]);
    this.outcome = message.outcome;
    this.end();
  }

  private async sealedByThisAttempt(): Promise<RunRow | undefined> {
    const run = await getRunById(this.context.services.pool, this.run.id);
    if (!run || run.sealed_at === null || run.current_attempt_id !== this.attemptId) return undefined;
    // The seal's own events were lost with its answer: subscribers still learn the outcome.
    await this.context.bus.publish(run.thread_id, [{ type: 'run.status', run_id: run.id, status: run.status, run: runView(run) }]);
    await this.context.bus.clearTail(run.id);
    return run;
  }

  /**
   * Runs a fenced write, retrying while the database is unavailable for up to one lease length
   * (backoff 200 ms doubling to 2 s). Safe because every such write matches only while this
   * attempt owns the run, and a step commit recognises itself when it already went through.
   */
  private async persist<T>(write: () => Promise<T>): Promise<T> {
    const deadline = performance.now() + this.leaseMs;
    for (let delay = 200; ; delay = Math.min(delay * 2, 2000)) {
      try {
        return await write();
      } catch (error) {
        if (!isDatabaseUnavailable(error) || this.finished || performance.now() + delay > deadline) throw error;
        this.context.services.logger.warn({ run_id: this.run.id, attempt_id: this.attemptId, err: (error as Error).message }, 'database unavailable; retrying the write');
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /**
   * The worker's session lock is gone (WorkerHost.sessionLost): the run is being requeued. Taken
   * through the ordered queue like a lease renewal's answer, so it never interleaves with a step
   * commit or seal in progress (one that commits first simply stands: it was still fenced).
   */
  sessionLost(): void {
    this.enqueue(async () => {
      if (!this.finished) this.loseLease('worker session lost: aborting the attempt, writing nothing more');
    });
  }

  private loseLease(reason = 'lease lost: aborting the attempt, writing nothing more'): void {
    if (this.lost) return;
    this.lost = true;
    this.context.services.logger.warn({ run_id: this.run.id, attempt_id: this.attemptId }, reason);
    this.cancel();
    this.end();
  }

  private abandon(): void {
    this.cancel();
    this.end();
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    this.ended.abort(ATTEMPT_ENDED);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const { metrics } = this.context.services;
    metrics.attemptsEnded.inc({ outcome: this.lost ? 'lost' : this.outcome });
    metrics.attemptDuration.observe((performance.now() - this.startedAt) / 1000);
    // Give the task a moment to read its cancel before the port closes.
    setTimeout(() => this.port?.close(), 1000).unref();
    // A sealed run's resync still owed keeps the store listener (it removes itself once done),
    // at most an hour; any other ending hands the tail to the next attempt.
    this.tail.discard();
    if (this.tail.pending()) setTimeout(() => this.offStore(), 3600_000).unref();
    else this.offStore();
    this.resolveDone();
  }
}
