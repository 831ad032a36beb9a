import type { HttpServer } from '../http/index.js';
import { assertSchemaCurrent } from './schema-guard.js';
import type { Services } from './services.js';

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}

/**
 * /healthz answers while HTTP is served. /readyz: 503 runtime before startup completes or
 * after a background task stopped; 503 database when the schema cannot be checked (or no
 * longer matches) within server.readiness_timeout; otherwise 200, with degraded ['redis']
 * while the key-value store is lost (the database holds all durable state).
 */
export function registerHealthRoutes(server: HttpServer, services: Services): void {
  const { role } = services;
  server.route({ method: 'GET', pattern: '/healthz', handler: () => ({ status: 200, body: { status: 'ok', role } }) });
  server.route({
    method: 'GET',
    pattern: '/readyz',
    handler: async () => {
      if (!services.readiness.isRuntimeReady()) return { status: 503, body: { status: 'unavailable', dependency: 'runtime', role } };
      try {
        await withTimeout(assertSchemaCurrent(services.pool, services.migrations), services.config.server.readiness_timeout * 1000);
      } catch {
        return { status: 503, body: { status: 'unavailable', dependency: 'database', role } };
      }
      const degraded = services.kv.state() === 'ready' ? [] : ['redis'];
      return { status: 200, body: { status: 'ready', role, ...(degraded.length ? { degraded } : {}) } };
    },
  });
}
