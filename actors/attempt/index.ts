// The attempt: a Piscina task running the agent loop. The worker host imports this index for
// the task file's path and the protocol; it never imports the task module itself (that would
// load the loop into the main thread for nothing).
import { fileURLToPath } from 'node:url';

export * from './attempt-protocol.js';

/** Absolute path of the compiled task file (dist/actors/attempt/attempt.task.js), for `new Piscina({filename})`. */
export const ATTEMPT_TASK_FILE = fileURLToPath(new URL('./attempt.task.js', import.meta.url));
