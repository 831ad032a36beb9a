import type pg from 'pg';
import { CacheBus, HistoryPrefixes, ReadCaches } from '../cache/index.js';
import type { LoadedConfig, Role } from '../config/index.js';
import { backgroundLane, createPool, loadMigrations, onCommittedChanges, startEmbeddedPostgres, type EmbeddedDatabase, type Migration } from '../db/index.js';
import { PasswordHashing } from '../identity/index.js';
import { loadOrCreateKeyRing, type KeyRing } from '../keyring/index.js';
import { createObjectStore, type ObjectStore } from '../objects/index.js';
import { createMemoryKv, createRedisKv, waitForKv, type Kv } from '../kv/index.js';
import type { Logger } from '../log/index.js';
import { createMetrics, type Metrics } from '../metrics/index.js';
import { EnqueueBatcher, SealBatcher } from '../stores/index.js';
import { Readiness } from './readiness.js';

/** Everything a role stands on, opened once per process and closed at shutdown. */
export interface Services {
  readonly role: Role;
  readonly loaded: LoadedConfig;
  readonly config: LoadedConfig['config'];
  readonly logger: Logger;
  readonly pool: pg.Pool;
  /** The resolved database URL (the embedded server's when database.url is empty). */
  readonly databaseUrl: string;
  readonly kv: Kv;
  /**
   * The per-process read cache of hot resources (agents, revisions, models, providers); every
   * committed change of those rows invalidates it here at once and elsewhere over pub/sub.
   */
  readonly caches: ReadCaches;
  /**
   * The same cache for credentials (API keys, sessions, memberships), or undefined when they
   * are read from the database on every request: on the in-process bus, because the operator's
   * `user disable` runs in another process that cannot reach this one's bus.
   */
  readonly credentialCache: ReadCaches | undefined;
  /** Prefixes of thread histories this process read (true forever: a history only grows at its end). */
  readonly histories: HistoryPrefixes;
  /** The inbox POST statements of this process, several in one when they arrive together. */
  readonly enqueues: EnqueueBatcher;
  /** The common seals of this process's attempts, several in one statement when they end together (on the background lane; in a process with bounded background work, each alone). */
  readonly seals: SealBatcher;
  readonly objects: ObjectStore;
  readonly keyring: KeyRing;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  /** Password hashing for request handlers: bounded, off the event loop. */
  readonly passwords: PasswordHashing;
  /** The build's migrations, read once at startup. */
  readonly migrations: Migration[];
  /** A background task that stopped for good turns the process not-ready (never a hang). */
  reportTaskFailure(task: string, error: unknown): void;
  close(): Promise<void>;
}

/** Resolves the database URL: the configured one, or the embedded default. */
export async function openDatabaseUrl(loaded: LoadedConfig, logger: Logger): Promise<{ url: string; embedded: EmbeddedDatabase | null }> {
  const { database } = loaded.config;
  if (database.url !== '') return { url: database.url, embedded: null };
  const embedded = await startEmbeddedPostgres({ directory: database.embedded_directory, port: database.embedded_port, logger });
  return { url: embedded.url, embedded };
}

export async function openServices(loaded: LoadedConfig, role: Role, logger: Logger): Promise<Services> {
  const { config } = loaded;
  if (config.kv.url === '' && role !== 'all') {
    throw new Error('kv.url is required for role control or worker: the in-process bus works only for role all in a single process');
  }
  const { url, embedded } = await openDatabaseUrl(loaded, logger);
  const background = backgroundConnections(config.database, role);
  const pool = createPool({
    url,
    size: config.database.pool_size,
    statementTimeoutMs: config.database.statement_timeout_ms,
    preparedStatements: config.database.prepared_statements,
    applicationName: `svc-service:${role}`,
    logger,
    backgroundConnections: background,
  });
  const kv = config.kv.url === '' ? createMemoryKv({ prefix: config.kv.key_prefix }) : createRedisKv({ url: config.kv.url, prefix: config.kv.key_prefix, logger });
  // Startup does not wait long for Redis: losing it only degrades the process.
  // The store starts "lost", so no state change announces a store that never answered: say
  // it once here (later losses and returns are logged by the store itself).
  if (kv.kind === 'redis' && (await waitForKv(kv, 2000)) !== 'ready') {
    logger.warn({ kv: redisAddress(config.kv.url) }, `key-value store unreachable at startup (Redis at ${redisAddress(config.kv.url)}, kv.url): serving degraded, live streams and rate limits pause until it answers; durable state is in PostgreSQL`);
  }
  const caches = new ReadCaches({ enabled: config.cache.enabled, maxEntries: config.cache.max_entries, ttlMs: config.cache.ttl_seconds * 1000 });
  const cacheBus = new CacheBus(kv, caches, logger);
  // A committed change drops the entries it touches in this process before the writer's
  // transaction helper returns (so the writer's next request reads the new row), then goes
  // out to the other processes.
  onCommittedChanges(pool, (changes) => {
    caches.invalidate(changes);
    cacheBus.publish(changes);
  });
  cacheBus.start();
  const objects = createObjectStoreFromConfig(config.objects);
  const keyring = await loadOrCreateKeyRing(config.encryption.key_file);
  const readiness = new Readiness();
  const metrics = createMetrics({ role });
  const enqueues = new EnqueueBatcher(pool);
  // Batched only where background work is not bounded (a worker): see SealBatcher.
  const seals = new SealBatcher(backgroundLane(pool), background === undefined ? 32 : 1);
  for (const [kind, batcher] of [['inbox', enqueues], ['seal', seals]] as const) {
    batcher.observe = (counted, n) => (counted === 'inputs' ? metrics.batchedItems : counted === 'statements' ? metrics.batchedStatements : metrics.batchedFailures).inc({ kind }, n);
  }
  return {
    role,
    loaded,
    config,
    logger,
    pool,
    databaseUrl: url,
    kv,
    caches,
    credentialCache: kv.kind === 'redis' ? caches : undefined,
    histories: new HistoryPrefixes(),
    enqueues,
    seals,
    objects,
    keyring,
    metrics,
    readiness,
    passwords: new PasswordHashing({
      concurrency: config.auth.password_hash_concurrency,
      queue: config.auth.password_hash_queue,
      onHash: (operation) => metrics.passwordHashes.inc({ operation }),
    }),
    migrations: loadMigrations(),
    reportTaskFailure(task, error) {
      readiness.markFailed(task);
      logger.error({ task, err: error }, 'background task stopped; process is no longer ready');
    },
    async close() {
      await cacheBus.close();
      await kv.close();
      await objects.close();
      await pool.end();
      if (embedded?.owned) await embedded.stop();
    },
  };
}

/** host:port of a Redis URL, without credentials. */
function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return '(unparseable kv.url)';
  }
}

export function createObjectStoreFromConfig(objects: LoadedConfig['config']['objects']): ObjectStore {
  if (objects.driver === 'directory') return createObjectStore({ driver: 'directory', directory: objects.directory, fsync: objects.directory_fsync });
  if (objects.bucket === '') throw new Error('objects.bucket is required with objects.driver = "s3"');
  return createObjectStore({
    driver: 's3',
    bucket: objects.bucket,
    region: objects.region,
    forcePathStyle: objects.force_path_style,
    ...(objects.endpoint ? { endpoint: objects.endpoint } : {}),
    ...(objects.access_key_id ? { credentials: { accessKeyId: objects.access_key_id, secretAccessKey: objects.secret_access_key } } : {}),
  });
}

/**
 * database.background_connections, 0 resolved (runtime/db/pool.ts, PoolLane): a process that
 * accepts inputs bounds its background work so its inbox statements find a connection and a
 * core; a worker's background work (seals, step commits) is what it is for, so it is not bounded.
 * One: under 32 concurrent clients in role all its first delta is about half of two's (bench
 * session 17: 18–21 ms against 27–38; session 18, a machine half as fast: 31–45 against 71–76),
 * for ~6–17 % fewer runs/s at saturation and later completions — the bound is also how many
 * seals run at once, so it caps a process's seals at about one per two round trips, and a
 * backlog drains slower when the database is far (through the bench's latency-adding proxy 300
 * accepted runs took ~12 s longer). The first token is what a user waits on; completion comes
 * after the run's output is already streamed. Raise it (up to pool_size) for throughput or a
 * distant database. Seals batched across runs (measured, session 18; and with SealBatcher,
 * session 21: 20 → 53 ms) removed that ceiling but doubled the 32-client first delta: the
 * bound's queue is what keeps the cores for requests, so a bounded process seals one by one.
 *
 * Not scaled with pool_size: the bound keeps background work from competing with requests for
 * the database's cores, which a larger pool does not add (measured: pool 16 with a bound of 3
 * gave a 32-client first delta of 46–49 ms, pools 6 and 10 with 2 gave 31–35 ms).
 */
const AUTOMATIC_BACKGROUND_CONNECTIONS = 1;

/** database.background_connections with 0 resolved for `role` (see AUTOMATIC_BACKGROUND_CONNECTIONS); undefined: no bound. */
export function backgroundConnections(database: { pool_size: number; background_connections: number }, role: Role): number | undefined {
  if (database.background_connections > 0) return Math.min(database.background_connections, database.pool_size);
  return role === 'worker' ? undefined : AUTOMATIC_BACKGROUND_CONNECTIONS;
}
