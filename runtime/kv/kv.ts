import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { Logger } from '../log/index.js';

export type KvState = 'ready' | 'lost';

/**
 * The key-value store: Redis in a deployment, or the in-process bus (role all, one process,
 * no kv.url). Losing Redis never stops the process: the database holds all durable state, so
 * the process stays ready with a degraded marker while live streams and rate limits pause.
 * `state()` flips on connection events; commands fail fast while lost (no offline queue), so
 * callers never pile up work behind a dead connection.
 */
export interface Kv {
  readonly kind: 'redis' | 'memory';
  readonly prefix: string;
  state(): KvState;
  /** The Redis client for commands (null for the in-process bus). */
  readonly redis: Redis | null;
  /** Opens another connection with the same settings (for blocking reads / subscriptions). */
  duplicate(): Redis | null;
  onStateChange(listener: (state: KvState) => void): () => void;
  close(): Promise<void>;
}

export function createRedisKv(options: { url: string; prefix: string; logger: Logger; connectTimeoutMs?: number }): Kv {
  const events = new EventEmitter();
  let current: KvState = 'lost';
  const set = (next: KvState): void => {
    if (next === current) return;
    current = next;
    if (next === 'lost') options.logger.warn('key-value store lost: live streams and rate limits pause; durable state is in PostgreSQL');
    else options.logger.info('key-value store ready');
    events.emit('state', next);
  };
  const settings = {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    // Reconnect forever, at most every second: the store returning must be noticed quickly
    // and without a restart.
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
  };
  const redis = new Redis(options.url, settings);
  redis.on('ready', () => set('ready'));
  redis.on('close', () => set('lost'));
  redis.on('end', () => set('lost'));
  redis.on('error', (error: Error) => options.logger.debug({ err: error.message }, 'redis connection error'));
  const extra: Redis[] = [];
  return {
    kind: 'redis',
    prefix: options.prefix,
    state: () => current,
    redis,
    duplicate: () => {
      // autoResubscribe off: ioredis's own resubscription after a reconnect is a SUBSCRIBE whose
      // promise nobody holds, so a close while it is in flight (a shutdown just after Redis
      // returned) is an unhandled rejection that ends the process. A subscriber resubscribes
      // itself on 'ready' (CacheBus does) and handles the answer.
      const copy = new Redis(options.url, { ...settings, enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: false });
      copy.on('error', () => undefined);
      extra.push(copy);
      return copy;
    },
    onStateChange: (listener) => {
      events.on('state', listener);
      return () => events.off('state', listener);
    },
    close: async () => {
      for (const c of [redis, ...extra]) c.disconnect(false);
      events.removeAllListeners();
    },
  };
}

/** The in-process bus: always ready; live events travel through memory inside one process. */
export function createMemoryKv(options: { prefix: string }): Kv {
  return {
    kind: 'memory',
    prefix: options.prefix,
    state: () => 'ready',
    redis: null,
    duplicate: () => null,
    onStateChange: () => () => undefined,
    close: async () => undefined,
  };
}

/** Waits until the store is ready or the timeout passes (startup should not block on Redis). */
export function waitForKv(kv: Kv, timeoutMs: number): Promise<KvState> {
  if (kv.state() === 'ready') return Promise.resolve('ready');
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      off();
      resolve(kv.state());
    }, timeoutMs);
    const off = kv.onStateChange((state) => {
      if (state !== 'ready') return;
      clearTimeout(timer);
      off();
      resolve('ready');
    });
  });
}
