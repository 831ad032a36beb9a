import type { Services, StreamBus } from '../../runtime/index.js';
import type { ThreadActors } from './thread-actors.js';

/** What the thread operations and the worker host share in one process. */
export interface EngineContext {
  readonly services: Services;
  readonly bus: StreamBus;
  readonly actors: ThreadActors;
}

// NOTIFY channels: a run became accepted (workers wake and claim), a cancel was requested (the
// worker holding the lease aborts the attempt), steer entries arrived for a running run.
export const CHANNEL_RUN_ACCEPTED = 'svc_run_accepted';
export const CHANNEL_RUN_CANCEL = 'svc_run_cancel';
export const CHANNEL_STEER = 'svc_run_steer';
