import type pg from 'pg';
import type { EnvironmentRuntime, RunClaim, RunRow, Services, StreamBus, ThreadState } from '../../runtime/index.js';
import type { ThreadActors } from './thread-actors.js';

/**
 * Runs inside the transaction that seals a run (sealAndAdvance), after the seal and the thread's
 * advance, so what it writes commits exactly when the seal does. It must not throw for a run
 * it does not concern; a failure it cannot absorb rolls the seal back.
 */
export type SealHook = (tx: pg.PoolClient, sealed: RunRow, services: Services, thread: ThreadState) => Promise<void>;

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
   * The same worker hosts (role all), asked for a free slot before a thread operation inserts a
   * run: with one, the run is claimed by the transaction that accepts it (insertRun's claim) and
   * handed to the host after the commit, with no claim transaction, NOTIFY or wake between the
   * POST and its attempt (the issue #18 lever "in role all, an accepted run can go straight to
   * the local worker host").
   */
  readonly localHosts: Set<LocalRunHost>;
}

/** A worker host of this process that runs can be handed to at acceptance (role all). */
export interface LocalRunHost {
  /** A slot, held until start or release; null when the host has none (full, draining, no session lock). */
  reserve(): LocalClaim | null;
}

/**
 * One reserved slot. Exactly one of start (the accepting transaction committed the run with
 * this claim) or release (it did not commit, or inserted no run) must follow.
 */
export interface LocalClaim extends RunClaim {
  start(run: RunRow): void;
  release(): void;
}

/** A slot of the first local host with room, or null (the run is accepted for any worker to claim). */
export function reserveLocalClaim(context: EngineContext): LocalClaim | null {
  for (const host of context.localHosts) {
    const claim = host.reserve();
    if (claim) return claim;
  }
  return null;
}

// NOTIFY channels: a run became accepted (workers wake and claim), a cancel was requested (the
// worker holding the lease aborts the attempt), steer entries arrived for a running run.
export const CHANNEL_RUN_ACCEPTED = 'svc_run_accepted';
export const CHANNEL_RUN_CANCEL = 'svc_run_cancel';
export const CHANNEL_STEER = 'svc_run_steer';
