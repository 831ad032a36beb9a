import { availableParallelism } from 'node:os';
import { AccessTokenCache, claimRuns, createProviderRegistry, holdWorkerSession, ID_PREFIX, newId, randomWorkerId, type ClaimedRun, type JsonArray, type JsonArrayText, type RunRow, type Services, type Stoppable } from '../../runtime/index.js';
import { AttemptPool, attemptPoolOptions, attemptThreadExecArgv } from '../attempt/index.js';
import { CHANNEL_RUN_ACCEPTED, CHANNEL_RUN_CANCEL, CHANNEL_STEER, type EngineContext, type LocalClaim, type LocalRunHost } from '../engine/index.js';
import { AttemptRunner } from './attempt-runner.js';
import { NotificationListener } from './notification-listener.js';
import type { ModelSources } from './run-models.js';
import { SpeculativeAttempt, speculable } from './speculative-attempt.js';

/**
 * The attempt pool's shape: threads × tasks per thread = worker.slots exactly, with threads the
 * largest divisor of slots ≤ cores − 1 (at least 1). One core is left to the process's main
 * thread, which spends about as much CPU per run as the attempt threads together (claims,
 * hosting, the fenced writes, the stream): an attempt thread more than the cores left would
 * only contend with it, and each thread costs its own start (~1 s of CPU loading the loop and
 * the tools) and its own JIT compilation of the same code. On two cores, one attempt thread
 * instead of two: worker CPU per run −0.3 to −0.45 ms (attempt threads and V8's helper
 * threads) in five of five alternating pairs, runs/s up, first-delta latency unchanged
 * (bench/RESULTS.md, session 25).
 */
export function poolShape(slots: number, cores = availableParallelism()): { maxThreads: number; concurrentTasksPerWorker: number } {
  let threads = Math.max(1, Math.min(cores - 1, slots));
  while (slots % threads !== 0) threads--;
  return { maxThreads: threads, concurrentTasksPerWorker: slots / threads };
}

/** How long, and how many, steer NOTIFYs for runs not hosted here are kept (WorkerHost.noteEarlySteer). */
const EARLY_STEER_MS = 10_000;
const EARLY_STEERS = 1_000;

/**
 * The worker host: claims accepted runs up to worker.slots (FOR UPDATE SKIP LOCKED, woken by
 * LISTEN with a polling fallback), runs each attempt in the Piscina pool and hosts it. On stop
 * it drains: no more claims, every attempt is asked to finish its step and hand off, and what
 * has not handed off within worker.drain_seconds is left to lease expiry.
 */
export class WorkerHost implements Stoppable, LocalRunHost {
  /**
   * This worker's identity: its runs' lease_owner and the key of its session lock. A new one
   * after a lost session (sessionLost), so the lost identity's runs are the lost-worker scan's
   * to requeue whatever happens first: a reconnect taking the same lock again before the scan
   * ran would otherwise leave them owned by a live lock with no attempt, until their leases end.
   */
  private identity = randomWorkerId();

  get id(): string {
    return this.identity;
  }
  private readonly running = new Map<string, AttemptRunner>();
  /** Steer NOTIFYs for runs not hosted (yet), by run id, with when (noteEarlySteer). */
  private readonly earlySteers = new Map<string, number>();
  private readonly models: ModelSources;
  private readonly pool: AttemptPool;
  private readonly listener: NotificationListener;
  private poller: NodeJS.Timeout | null = null;
  private claiming: Promise<void> | null = null;
  /** A claim found (or left) no free slot since the last freed slot woke the claim loop. */
  private saturated = false;
  /** Runs named by a NOTIFY while a claim was in flight (see wake). */
  private readonly notifiedWhileClaiming = new Set<string>();
  private again = false;
  /**
   * Slots promised but not yet running: reserved by thread operations of this process for runs
   * their transactions claim (reserve), and asked for by the claim statement in flight. Every
   * count of free slots subtracts both, so running + reserved + claiming never exceeds slots —
   * but for a seal's hand-over (reserve's `sealing`): the sealing attempt and the thread's next
   * run both count until the sealing runner returns, which does no model or tool work after its
   * seal, so at most one extra per sealing attempt, for the few microseconds between the seal's
   * commit and the runner's end.
   */
  private reserved = 0;
  private claimingFor = 0;
  private stopping = false;
  private readonly beat: () => void;
  private readonly wakeLocal = (runIds: readonly string[]): void => this.wakeFor(runIds);

  constructor(
    private readonly context: EngineContext,
    databaseUrl: string,
  ) {
    const { config } = context.services;
    this.models = { registry: createProviderRegistry({ enableLocalEnvironment: config.environments.enable_local }), tokens: new AccessTokenCache() };
    const shape = poolShape(config.worker.slots);
    this.pool = new AttemptPool({ ...shape, ...attemptPoolOptions(shape.maxThreads), execArgv: attemptThreadExecArgv() });
    // A claim loop stuck on an await (say, a pool connect that never returns) must turn the
    // process not-ready rather than leave accepted runs waiting forever.
    this.beat = context.services.readiness.watch('worker.claim', Math.max(30_000, config.worker.poll_seconds * 10_000));
    // After a (re)connect, notifications sent while the connection was down are caught up
    // at once: claim, and hand every running attempt the steer entries it may have missed.
    // The LISTEN connection also carries this worker's session lock (holdWorkerSession): when
    // the process dies, the lock goes with the connection and expire_leases requeues its runs
    // at once rather than after their leases.
    this.listener = new NotificationListener(databaseUrl, [CHANNEL_RUN_ACCEPTED, CHANNEL_RUN_CANCEL, CHANNEL_STEER], (channel, payload) => this.onNotify(channel, payload), context.services.logger, () => this.catchUp(), (client) => holdWorkerSession(client, this.id), () => this.sessionLost());
  }

  get services(): Services {
    return this.context.services;
  }

  async start(): Promise<void> {
    await this.listener.start();
    this.poller = setInterval(() => this.wake(), this.services.config.worker.poll_seconds * 1000);
    // Role all: a run accepted by this process's thread actors is claimed without the NOTIFY
    // round trip (EngineContext.localClaimers); the claim is the same fenced statement.
    this.context.localClaimers.add(this.wakeLocal);
    this.context.localHosts.add(this);
    this.wake();
  }

  private get free(): number {
    return this.services.config.worker.slots - this.running.size - this.reserved - this.claimingFor;
  }

  /**
   * A slot for a run that the caller's transaction will insert claimed (LocalRunHost).
   * Same preconditions as a claim: not stopping, and the session lock held (a run leased to a
   * worker whose lock is not held is requeued by the lost-worker scan at once). The claim's
   * lease_owner is the identity at reservation; if the session was lost before the commit, the
   * run is that lost identity's and the scan requeues it (start hosts nothing).
   *
   * `sealing`: the run whose seal will start its thread's next run. When that run's attempt is
   * hosted here, its slot is handed on whatever else is free: the seal ends it, so the sealing
   * worker keeps the thread's next run deterministically (not only when no claim statement
   * happens to be in flight, whose claimingFor takes every free slot for its round trip).
   *
   * `inputThread`: the thread of an inbox input, whose statement will learn only under the
   * thread's row lock whether it starts a run. While a run of that thread executes here, the
   * thread is busy and the input will queue behind that run, so it takes no slot: held for the
   * statement's round trip, the slot would only keep a run of another thread from starting here
   * (claimed, or accepted and speculated) meanwhile. Should that run end before the statement
   * locks the row, the input's run is accepted for any worker and claimed as every unclaimed
   * run is (NOTIFY); nothing but its early start depends on the reservation.
   */
  reserve(sealing?: string, inputThread?: string): LocalClaim | null {
    if (this.stopping || !this.listener.ready) return null;
    if (inputThread !== undefined && this.hostsThread(inputThread)) return null;
    if (this.free <= 0 && (sealing === undefined || !this.running.has(sealing))) return null;
    this.reserved++;
    const workerId = this.id;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      this.reserved--;
      return true;
    };
    let speculation: SpeculativeAttempt | null = null;
    return {
      workerId,
      attemptId: newId(ID_PREFIX.attempt),
      leaseSeconds: this.services.config.worker.authority_seconds,
      speculate: (run: RunRow, history?: JsonArrayText) => {
        // Not for a thread whose run executes here (its input is queued, not started), nor once
        // stopping; at most one per slot.
        if (settled || speculation || this.stopping || !speculable(run) || this.hostsThread(run.thread_id)) return;
        speculation = new SpeculativeAttempt(this.services, this.models, this.pool, this.context.environments, run, history);
      },
      start: (run: RunRow, history?: JsonArray, idleThread?: boolean) => {
        if (!settle()) return;
        // The speculated attempt is this run's only if it was started for exactly this run (its
        // attempt id is this claim's, so it can be no other run's); else it is cancelled.
        const speculated = speculation?.matches(run) ? speculation : undefined;
        if (speculation) this.services.metrics.attemptSpeculations.inc({ outcome: speculated ? 'adopted' : 'discarded' });
        if (!speculated) speculation?.discard();
        speculation = null;
        if (this.stopping || workerId !== this.id) {
          speculated?.discard();
          // Committed running and leased to this worker, which will not run it: stopping (the
          // session lock goes with the listener at the end of stop) or a lost identity. The
          // lost-worker scan requeues it once no lock is held for its lease_owner.
          this.services.logger.warn({ run_id: run.id, worker_id: workerId }, 'a run claimed at acceptance was not started here; it is requeued');
          return;
        }
        this.host(run, true, history, idleThread, speculated);
      },
      release: () => {
        if (!settle()) return;
        if (speculation) this.services.metrics.attemptSpeculations.inc({ outcome: 'discarded' });
        speculation?.discard();
        speculation = null;
        // A claim may have found no room because of this reservation.
        if (this.saturated) {
          this.saturated = false;
          this.wake();
        }
      },
    };
  }

  /**
   * Claims as many runs as there are free slots; coalesces concurrent wake-ups. `notified`: the
   * run a NOTIFY named. One that arrives while a claim is in flight only asks for another claim
   * if that claim did not take the run: in role all the local wake and the NOTIFY of one accept
   * arrive together, and the second claim would find nothing.
   */
  wake(notified?: string): void {
    if (this.stopping) return;
    if (this.claiming) {
      if (notified === undefined) this.again = true;
      else this.notifiedWhileClaiming.add(notified);
      return;
    }
    this.claiming = this.claim()
      .catch((error: unknown) => this.services.logger.warn({ err: (error as Error).message }, 'claim failed; retrying at the next poll'))
      .finally(() => {
        this.beat();
        this.claiming = null;
        for (const id of this.notifiedWhileClaiming) if (!this.running.has(id)) this.again = true;
        this.notifiedWhileClaiming.clear();
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async claim(): Promise<void> {
    const { worker } = this.services.config;
    const free = this.free;
    // No claim without the session lock: a run owned by a worker that holds no lock looks
    // dead to expire_leases and would be requeued at once. Reconnecting catches up (catchUp).
    if (free <= 0) {
      this.saturated = true;
      return;
    }
    if (!this.listener.ready) return;
    // Role all: one free slot stays out of the claim while it is in flight, so an input this
    // process accepts meanwhile can still be claimed in its own transaction (reserve) instead of
    // waiting for the NOTIFY and the next claim. The slot invariant holds either way: running +
    // reserved + claimingFor never exceeds slots, because the claim asks for `ask` slots only.
    const ask = this.services.role === 'all' && free > 1 ? free - 1 : free;
    let claimed: ClaimedRun[];
    this.claimingFor = ask;
    try {
      claimed = await claimRuns(this.services.pool, this.id, ask, worker.authority_seconds, () => newId(ID_PREFIX.attempt));
    } finally {
      this.claimingFor = 0;
    }
    // A run claimed with no steer entry pending reads none at its start, as one started on an
    // idle thread does: the NOTIFY of each steer committed since names it (claimRuns).
    for (const { run, steerPending } of claimed) this.host(run, false, undefined, !steerPending);
    // Every slot asked for taken: there may be more, and runs accepted from now on find no room.
    if (claimed.length === ask) {
      this.again = true;
      this.saturated = true;
    }
  }

  /**
   * Runs the attempt of a run claimed by this worker; `announced`: its running status is already
   * on the stream; `history`: the thread's history as the claiming transaction locked it;
   * `idleThread`: started on an idle thread (LocalClaim.start).
   */
  private host(run: RunRow, announced: boolean, history?: JsonArray, idleThread = false, speculation?: SpeculativeAttempt): void {
    const runner = new AttemptRunner(this.context, this.models, this.pool, run, announced, history, idleThread, speculation);
    // A steer NOTIFY handled before this run was hosted here (noteEarlySteer): asked now, the
    // runner reads the pending steer entries once its port is open.
    if (this.earlySteers.delete(run.id)) void runner.deliverSteer();
    this.running.set(run.id, runner);
    this.services.metrics.attemptsActive.set(this.running.size);
    void runner.done.then(() => {
      this.running.delete(run.id);
      this.services.metrics.attemptsActive.set(this.running.size);
      // A freed slot can only take a run that was accepted while every slot was busy (its
      // NOTIFY found no room), or this very run requeued when its attempt ended without
      // settling it (its NOTIFY may have arrived while this runner still held it); otherwise
      // every accepted run was claimed when it was announced, and a claim now would find
      // nothing. The poll stays the fallback.
      if (this.saturated || !runner.settledRun) {
        this.saturated = false;
        this.wake();
      }
    });
    void runner.start();
  }

  /** Whether an attempt of the thread runs here (an input for it would be queued, not started). */
  private hostsThread(threadId: string): boolean {
    for (const runner of this.running.values()) if (runner.run.thread_id === threadId) return true;
    return false;
  }

  /**
   * Wakes the claim loop for runs just accepted (named by a NOTIFY, or by this process's own
   * commit in role all): a run already claimed here, or about to be by the claim in flight, asks
   * for no second claim. In role all both signals arrive for every accept, in either order.
   */
  private wakeFor(runIds: readonly string[]): void {
    for (const runId of runIds) if (!this.running.has(runId)) this.wake(runId);
  }

  /**
   * A steer NOTIFY for a run not hosted here, kept for a while (EARLY_STEER_MS, at most
   * EARLY_STEERS): a run started on an idle thread does not read its pending steer entries at
   * its start (AttemptRunner.begin), and a steer committed right after its input can be
   * announced in the same turn of the event loop as that input's commit, before the run is
   * hosted. Every worker hears every steer, so most entries name runs hosted elsewhere; they
   * expire.
   */
  private noteEarlySteer(runId: string): void {
    const now = performance.now();
    for (const [id, at] of this.earlySteers) {
      if (now - at < EARLY_STEER_MS && this.earlySteers.size < EARLY_STEERS) break;
      this.earlySteers.delete(id);
    }
    this.earlySteers.set(runId, now);
  }

  private onNotify(channel: string, runId: string): void {
    if (channel === CHANNEL_RUN_ACCEPTED) return this.wakeFor([runId]);
    const runner = this.running.get(runId);
    if (!runner) {
      if (channel === CHANNEL_STEER) this.noteEarlySteer(runId);
      return;
    }
    if (channel === CHANNEL_RUN_CANCEL) runner.cancel();
    else if (channel === CHANNEL_STEER) this.steer(runner);
  }

  /**
   * The LISTEN connection, and with it this worker's session lock, is gone: the control's
   * lost-worker scan requeues this worker's runs within worker.liveness_scan_ms (or, if the
   * server still holds the old session, expire_leases does at lease end). Every attempt here is
   * therefore ended at once as if its lease were lost, writing and publishing nothing more, so
   * that no attempt streams beside its successor; the claim loop stays off until the lock is
   * held again (claim() checks listener.ready).
   */
  private sessionLost(): void {
    if (this.stopping) return;
    // Claims and the next session lock are under a new identity (see `identity`); the attempts
    // below were the old one's and end now.
    const lost = this.identity;
    this.identity = randomWorkerId();
    if (this.running.size === 0) return;
    this.services.logger.warn({ worker_id: lost, next_worker_id: this.identity, attempts: this.running.size }, 'worker session lost: ending this worker\'s attempts; their runs are requeued');
    for (const runner of this.running.values()) runner.sessionLost();
  }

  private catchUp(): void {
    this.wake();
    for (const runner of this.running.values()) this.steer(runner);
  }

  /** A failed steer lookup (database gone) is retried by the next NOTIFY or reconnect. */
  private steer(runner: AttemptRunner): void {
    runner.deliverSteer().catch((error: unknown) => this.services.logger.warn({ run_id: runner.run.id, err: (error as Error).message }, 'steer delivery failed; retried on the next notification'));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.context.localClaimers.delete(this.wakeLocal);
    this.context.localHosts.delete(this);
    this.services.readiness.unwatch('worker.claim');
    if (this.poller) clearInterval(this.poller);
    await this.claiming;
    const runners = [...this.running.values()];
    runners.forEach((r) => r.drain());
    const deadline = this.services.config.worker.drain_seconds * 1000;
    await Promise.race([Promise.all(runners.map((r) => r.done)), new Promise((r) => setTimeout(r, deadline).unref())]);
    await this.listener.stop();
    await this.pool.destroy();
  }
}
