import type { HttpServer, RoleStarter, Services } from '../runtime/index.js';
import { engineFor } from './engine/index.js';
import { WorkerHost } from './worker/index.js';

export * from './engine/index.js';
export * from './threads/index.js';
export { WorkerHost, poolShape, decodePage, PAGE_ITEMS, readToolOutput } from './worker/index.js';
export { ItemKind } from './attempt/index.js';

const startWorker: RoleStarter = async (services: Services, _server: HttpServer) => {
  const host = new WorkerHost(engineFor(services), services.databaseUrl);
  await host.start();
  return host;
};

/** Starters of the worker host (worker and all roles). */
export const workerStarters: RoleStarter[] = [startWorker];
export { readItems, type ItemsQuery } from './runs/index.js';
export { TOOL_RESULT_ITEM_BYTES } from './attempt/index.js';
export { expireLeasesPass, requeueLostWorkersPass, advanceThreadsPass } from './sweeps/index.js';
export { startFindingAnalysis, DEFAULT_MAX_TRACES, type AnalysisRequest } from './findings/index.js';
