export { enqueueInput, withdrawEntry, type InputRequest, type ThreadResult } from './inbox-operations.js';
export { advanceThread, cancelRun, sealAndAdvance } from './run-operations.js';
