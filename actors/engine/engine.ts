import { createEnvironmentRuntime, createStreamBus, type Services } from '../../runtime/index.js';
import { recordAnalysisFindings } from '../findings/seal/index.js';
import { ThreadActors } from './thread-actors.js';
import type { EngineContext } from './engine-context.js';

// One engine per process (per Services): the API and the worker host of an `all` process must
// share the thread actors (one mailbox per thread per process) and the stream bus (the
// in-process bus only works inside one process). Keyed by the Services instance, so tests that
// start several services in one process get one engine each.
const engines = new WeakMap<Services, EngineContext>();

export function engineFor(services: Services): EngineContext {
  let engine = engines.get(services);
  if (!engine) {
    // Seal hooks are fixed here, at engine creation, so every process that seals runs (worker,
    // API cancel, expire_leases sweep) runs the same hooks whatever roles it serves.
    engine = { services, bus: createStreamBus(services.kv), actors: new ThreadActors(), sealHooks: [recordAnalysisFindings], environments: createEnvironmentRuntime(services), localClaimers: new Set(), localHosts: new Set() };
    engines.set(services, engine);
  }
  return engine;
}
