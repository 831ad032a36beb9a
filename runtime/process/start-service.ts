import type { LoadedConfig, Role } from '../config/index.js';
import { databaseUnreachableError } from '../db/index.js';
import { HttpServer } from '../http/index.js';
import type { Logger } from '../log/index.js';
import { serveMetrics } from '../metrics/index.js';
import { registerHealthRoutes } from './health-routes.js';
import { prepareSchema } from './schema-guard.js';
import { openServices, type Services } from './services.js';
import { checkAutovacuum } from './vacuum-check.js';

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * A role starter registers its routes on the server (before it listens) and starts its
 * background work; the returned stop() ends that work at shutdown. Starters live in api/,
 * jobs/ and actors/; the composition root (main.ts) hands them to the CLI.
 */
export type RoleStarter = (services: Services, server: HttpServer) => Promise<Stoppable | void>;

/** control: API + sweeps; worker: attempts; all: both. */
export interface RoleStarters {
  control: RoleStarter[];
  worker: RoleStarter[];
}

export interface RunningService {
  readonly port: number;
  readonly services: Services;
  /** Graceful shutdown: stop background work (worker drain), finish requests, close pools. */
  stop(): Promise<void>;
}

export async function startService(loaded: LoadedConfig, role: Role, starters: RoleStarters, logger: Logger): Promise<RunningService> {
  const services = await openServices(loaded, role, logger);
  const stoppables: Stoppable[] = [];
  let server: HttpServer | null = null;
  let metricsServer: { close(): Promise<void> } | null = null;
  try {
    await prepareSchema(services.pool, {
      role,
      autoMigrate: loaded.config.database.auto_migrate,
      lockTimeoutSeconds: loaded.config.database.migration_advisory_lock_timeout,
      logger,
      migrations: services.migrations,
    });
    // A warning, never a refusal: the check reads settings only, and a failure to read them
    // (a restricted role) must not stop the start.
    await checkAutovacuum(services.pool, logger).catch((error: unknown) => logger.debug({ err: error }, 'could not read the autovacuum settings'));
    // The labelled series of each (method, route, status), resolved once: prom-client hashes
    // and validates a label object on every inc/observe (~2 % of a cached GET's CPU).
    const series = new Map<string, { count: () => void; time: (seconds: number) => void }>();
    server = new HttpServer({
      host: loaded.config.server.host,
      port: loaded.config.server.port,
      logger,
      onResponse: (method, route, status, seconds) => {
        const key = `${method} ${route} ${status}`;
        let entry = series.get(key);
        if (!entry) {
          const counter = services.metrics.httpRequests.labels({ method, route, status: String(status) });
          const histogram = services.metrics.httpDuration.labels({ method, route });
          entry = { count: () => counter.inc(), time: (s) => histogram.observe(s) };
          series.set(key, entry);
        }
        entry.count();
        entry.time(seconds);
      },
    });
    registerHealthRoutes(server, services);
    const chosen = role === 'all' ? [...starters.control, ...starters.worker] : role === 'control' ? starters.control : starters.worker;
    for (const start of chosen) {
      const stoppable = await start(services, server);
      if (stoppable) stoppables.push(stoppable);
    }
    const port = await server.listen();
    if (loaded.config.metrics.enabled) metricsServer = await serveMetrics(services.metrics, loaded.config.metrics.host, loaded.config.metrics.port);
    services.readiness.markStarted();
    logger.info({ role, host: loaded.config.server.host, port }, 'svc-service ready');
    const httpServer = server;
    let stopping: Promise<void> | null = null;
    return {
      port,
      services,
      stop: () =>
        (stopping ??= (async () => {
          services.readiness.markFailed('shutdown');
          for (const s of [...stoppables].reverse()) await s.stop().catch((error) => logger.error({ err: error }, 'error while stopping'));
          await httpServer.close(loaded.config.server.shutdown_grace_seconds * 1000);
          await metricsServer?.close();
          await services.close();
          logger.info({ role }, 'svc-service stopped');
        })()),
    };
  } catch (error) {
    for (const s of [...stoppables].reverse()) await s.stop().catch(() => undefined);
    await server?.close(0);
    await metricsServer?.close();
    await services.close();
    throw databaseUnreachableError(services.databaseUrl, error, loaded.config.database.url === '') ?? error;
  }
}
