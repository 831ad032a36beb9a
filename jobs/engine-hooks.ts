import { advanceThreadsPass, childResultHandler, engineFor, expireLeasesPass, requeueLostWorkersPass } from '../actors/index.js';
import type { EngineHooks, Services } from '../runtime/index.js';
import { purgeMemoryNamespace } from './memory-purge.js';

/**
 * The run engine's part of the background work: advance_threads starts the next queued input
 * of idle threads, expire_leases ends attempts whose lease expired or whose worker's database
 * session is gone (requeue or fail; lost_workers is its quick part, run far more often). Both
 * passes are bounded and idempotent (a pass may run again on any replica). child_result rows
 * resume a parent run once every subagent child of its wait has ended (actors/threads);
 * memory_purge rows delete a deleted memory's namespace at its provider.
 */
export const ENGINE_HOOKS: EngineHooks = {
  advance_threads: [async (services: Services) => void (await advanceThreadsPass(engineFor(services)))],
  expire_leases: [async (services: Services) => void (await expireLeasesPass(engineFor(services)))],
  lost_workers: [async (services: Services) => void (await requeueLostWorkersPass(engineFor(services)))],
  outbox: { child_result: childResultHandler, memory_purge: purgeMemoryNamespace },
};
