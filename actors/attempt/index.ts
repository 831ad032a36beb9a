// The attempt: a Piscina task running the agent loop. The worker host imports this index for
// the task file's path and the protocol; it never imports the task module itself (that would
// load the loop into the main thread for nothing).
export * from './attempt-protocol.js';
export { ATTEMPT_TASK_FILE, AttemptPool, HostChannel, type AttemptPoolOptions } from './attempt-pool.js';

/**
 * Worker-thread flags for the attempt pool. Piscina first tries `require(filename)`; on Node
 * 20.19+ that loads our ES module through require(esm), which once aborted a whole test
 * process in CI (v8 fatal "IsGraphAsync must be used on an instantiated module", raised from
 * Piscina's require while a pool was starting or being torn down). With require(esm) off,
 * Piscina loads the task with import(), the path ES modules are built for. Source maps are
 * kept for readable stacks, and `--cpu-prof*` flags too, so a profiled process (the bench's
 * BENCH_SERVICE_CPU_PROF) also writes one profile per attempt thread.
 */
export function attemptThreadExecArgv(): string[] {
  const kept = process.execArgv.filter((arg) => arg === '--enable-source-maps' || arg === '--cpu-prof' || arg.startsWith('--cpu-prof-'));
  return [...kept, '--no-experimental-require-module'];
}
export { TOOL_RESULT_ITEM_BYTES } from './tool-output.js';
export { CONNECTIONS_TOOLSET, type ConnectionsResource } from './tools/index.js';
export { EnvironmentResources, ENVIRONMENT_TOOLSET, skillFolders } from './tools/index.js';
export { MEMORY_TOOLSET, WEB_TOOLSET, type MemoryResource, type MountResource, type RecalledSource, type WebResource } from './tools/index.js';

/**
 * Piscina options of the attempt pool besides its shape and flags (worker-host.ts spreads them).
 * Every thread is started with the pool and kept: a thread costs ~1 s of CPU to start (loading
 * the loop, the adapters and the tools' modules), which Piscina would otherwise spend on demand
 * when load first exceeds one thread's concurrentTasksPerWorker (in the middle of a burst, on
 * the runs that then wait for it) and again after every idle period (idleTimeout).
 */
export function attemptPoolOptions(threads: number): { minThreads: number; idleTimeout: number } {
  return { minThreads: threads, idleTimeout: 60_000 };
}
