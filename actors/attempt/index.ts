// The attempt: a Piscina task running the agent loop. The worker host imports this index for
// the task file's path and the protocol; it never imports the task module itself (that would
// load the loop into the main thread for nothing).
import { fileURLToPath } from 'node:url';

export * from './attempt-protocol.js';

/** Absolute path of the compiled task file (dist/actors/attempt/attempt.task.js), for `new Piscina({filename})`. */
export const ATTEMPT_TASK_FILE = fileURLToPath(new URL('./attempt.task.js', import.meta.url));

/**
 * Worker-thread flags for the attempt pool. Piscina first tries `require(filename)`; on Node
 * 20.19+ that loads our ES module through require(esm), which once aborted a whole test
 * process in CI (v8 fatal "IsGraphAsync must be used on an instantiated module", raised from
 * Piscina's require while a pool was starting or being torn down). With require(esm) off,
 * Piscina loads the task with import(), the path ES modules are built for. Source maps are
 * kept for readable stacks.
 */
export function attemptThreadExecArgv(): string[] {
  return [...process.execArgv.filter((arg) => arg === '--enable-source-maps'), '--no-experimental-require-module'];
}
export { TOOL_RESULT_ITEM_BYTES } from './tool-output.js';
export { CONNECTIONS_TOOLSET, type ConnectionsResource } from './tools/index.js';
export { EnvironmentResources, ENVIRONMENT_TOOLSET, skillFolders } from './tools/index.js';
export { MEMORY_TOOLSET, WEB_TOOLSET, type MemoryResource, type MountResource, type RecalledSource, type WebResource } from './tools/index.js';
