import type pg from 'pg';
import type { EnvironmentRuntime, JsonArray, JsonArrayText, RunClaim, RunRow, Services, StreamBus, ThreadState } from '../../runtime/index.js';
import type { ThreadActors } from './thread-actors.js';

/**
 * Runs inside the transaction that seals a run (sealAndAdvance), after the seal and the thread's
 * advance, so what it writes commits exactly when the seal does. It must not throw for a run
 * it does not concern; a failure it cannot absorb rolls the seal back.
 */
export type SealHook = ((tx: pg.PoolClient, sealed: RunRow, services: Services, thread: ThreadState) => Promise<void>) & {
  /**
   * Whether the hook may issue statements for a run of this status on this thread (read under
   * the thread lock). A seal that no hook concerns commits with its last statements (one round
   * trip fewer, sealAndAdvance); without this predicate every seal is taken to concern the hook.
   */
  readonly concerns?: (thread: ThreadState, status: string) => boolean;
  /**
   * `concerns` as SQL over the thread's row `t`, for a run of this status (null: never), so that
   * the seal in one statement (sealInOneStatement) can decline for it. Without it, a seal never
   * takes that path.
   */
  readonly concernedSql?: (status: string) => string | null;
};

/** What the thread operations and the worker host share in one process. */
export interface EngineContext {
  readonly services: Services;
  readonly bus: StreamBus;
  readonly actors: ThreadActors;
  /** Called in order for every sealed run (see SealHook). */
  readonly sealHooks: readonly SealHook[];
  /** Environments of this process: one lock per environment, one bubblewrap check (runtime/environments). */
  readonly environments: EnvironmentRuntime;
  /**
   * The worker hosts of this process (role all), woken directly when a thread operation's
   * commit accepted a run: the claim follows at once instead of after NOTIFY → LISTEN. The claim
   * itself is unchanged (committed, FOR UPDATE SKIP LOCKED, fenced by its attempt id), so a
   * run is still claimed once whoever wakes first; NOTIFY still wakes every other worker.
   */
  readonly localClaimers: Set<(acceptedRunIds: readonly string[]) => void>;
  /**
   * The worker hosts of this process (roles all and worker), asked for a free slot before a
   * thread operation inserts a run (LocalClaims): with one, the run is claimed by the
   * transaction that accepts it (insertRun's claim) and handed to the host after the commit,
   * with no claim transaction, NOTIFY or wake in between (the issue #18 lever "in role all, an
   * accepted run can go straight to the local worker host").
   */
  readonly localHosts: Set<LocalRunHost>;
}

/** A worker host of this process that runs can be handed to at acceptance. */
export interface LocalRunHost {
  /**
   * A slot, held until start or release; null when the host has none (full, draining, no session
   * lock). `sealing`: the run whose seal asks, when its attempt runs here — its slot passes to
   * the thread's next run even if no other is free (see WorkerHost.reserve). `inputThread`: an
   * inbox input's thread, reserved for before its statement knows whether the thread is idle;
   * none while a run of that thread executes here (see WorkerHost.reserve).
   */
  reserve(sealing?: string, inputThread?: string): LocalClaim | null;
}

/**
 * One reserved slot. Exactly one of start (the accepting transaction committed the run with
 * this claim) or release (it did not commit, or inserted no run) must follow.
 */
export interface LocalClaim extends RunClaim {
  /**
   * `history`: the thread's history as the run's transaction locked it (its first
   * history_start messages), when that transaction read it anyway: the attempt then does not
   * read it again on its way to the first token.
   * `idleThread`: the run was started by an input on an idle thread (the inbox POST): no entry
   * of the thread was pending when it committed, so the only steer entries its attempt can be
   * owed are those inserted after that commit, each announced by a NOTIFY (the attempt does not
   * read the pending steer entries at its start unless one was announced before its port was
   * open: AttemptRunner.begin).
   */
  start(run: RunRow, history?: JsonArray, idleThread?: boolean): void;
  release(): void;
  /**
   * Starts the attempt now, before the transaction commits, for `run` as the caller's statement
   * will insert it if the thread is as this process holds it (`history`: its whole history;
   * undefined when it has none). The attempt's messages wait in the host until `start` is called
   * with that very run; `release`, or start with any other, cancels it (actors/worker
   * SpeculativeAttempt). The host may decline (a run whose preparation has outside effects, a
   * thread whose run executes here); absent on hosts that never speculate.
   */
  speculate?(run: RunRow, history?: JsonArrayText): void;
}

/**
 * A slot of this process's worker host held across a thread operation's transaction (kept over a
 * retried try and over entries that failed to start): `reserve` before the run is inserted,
 * `settle` after the transaction — it hands the slot the run the transaction committed with its
 * claim, or gives it back. Call settle after the operation's events are queued on the bus, so the
 * stream shows the run's status before anything its attempt publishes.
 */
export class LocalClaims {
  claim: LocalClaim | null = null;

  /** `sealing`: the run being sealed, for a seal that may start the thread's next run. */
  constructor(private readonly sealing?: string) {}

  /**
   * The slot held, else one of the first local host with room; null: the run is accepted for any
   * worker. `inputThread`: see LocalRunHost.reserve.
   */
  reserve(context: EngineContext, inputThread?: string): LocalClaim | null {
    if (this.claim) return this.claim;
    for (const host of context.localHosts) {
      this.claim = host.reserve(this.sealing, inputThread);
      if (this.claim) break;
    }
    return this.claim;
  }

  /**
   * After the transaction: `run` is what it committed (null if nothing, or it failed);
   * `history`, the thread's history as that transaction locked it, if it read it;
   * `idleThread`, the run was started on an idle thread (LocalClaim.start).
   */
  settle(run: RunRow | null | undefined, history?: JsonArray, idleThread = false): void {
    const { claim } = this;
    this.claim = null;
    if (!claim) return;
    if (run && run.current_attempt_id === claim.attemptId) claim.start(run, history, idleThread);
    else claim.release();
  }
}

// NOTIFY channels: a run became accepted (workers wake and claim), a cancel was requested (the
// worker holding the lease aborts the attempt), steer entries arrived for a running run.
export const CHANNEL_RUN_ACCEPTED = 'svc_run_accepted';
export const CHANNEL_RUN_CANCEL = 'svc_run_cancel';
export const CHANNEL_STEER = 'svc_run_steer';
