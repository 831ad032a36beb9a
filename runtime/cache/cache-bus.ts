import type { Redis } from 'ioredis';
import type { CommittedChange } from '../db/index.js';
import type { Kv } from '../kv/index.js';
import type { Logger } from '../log/index.js';
import { CACHE_KINDS, type CacheKind, type ReadCaches } from './read-caches.js';

/** Redis channel of one kind's invalidations: `<prefix>cache:<kind>`, the message is the id. */
export const cacheChannel = (prefix: string, kind: CacheKind): string => `${prefix}cache:${kind}`;

/** Changes kept for republishing while Redis is lost; beyond, one flush per kind replaces them. */
const MAX_PENDING = 10_000;

/**
 * Carries invalidations between processes over Redis pub/sub: the writer publishes each
 * committed change (after its local invalidation), every process drops what a message names.
 * It decides when the cache may serve: only while the subscription is confirmed and the
 * command connection is up; any loss turns serving off (reads go to the database) until
 * SUBSCRIBE is confirmed again, and the cache is emptied at each switch (ReadCaches.setLive).
 * On the in-process bus (role all, one process) every writer is in this process: invalidation
 * is the local one, and the cache is live at once.
 */
export class CacheBus {
  private subscriber: Redis | null = null;
  private subscribed = false;
  private pending: CommittedChange[] = [];
  private offState: () => void = () => undefined;
  private closed = false;

  constructor(
    private readonly kv: Kv,
    private readonly caches: ReadCaches,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.kv.kind === 'memory') return this.caches.setLive(true);
    const subscriber = this.kv.duplicate();
    if (!subscriber) return;
    this.subscriber = subscriber;
    const channels = CACHE_KINDS.map((kind) => cacheChannel(this.kv.prefix, kind));
    const byChannel = new Map(CACHE_KINDS.map((kind) => [cacheChannel(this.kv.prefix, kind), kind] as const));
    subscriber.on('message', (channel: string, id: string) => {
      const kind = byChannel.get(channel);
      if (kind) this.caches.invalidate([{ kind, id }]);
    });
    const subscribe = (): void => {
      // Serving resumes only once Redis confirmed the subscription: a message published
      // before that would be missed, so the cache is emptied again as it goes live.
      subscriber.subscribe(...channels).then(
        () => {
          if (this.closed || subscriber.status !== 'ready') return;
          this.subscribed = true;
          this.update();
        },
        (error: Error) => this.logger.debug({ err: error.message }, 'cache invalidation subscribe failed; caches stay bypassed'),
      );
    };
    subscriber.on('ready', subscribe);
    const lost = (): void => {
      this.subscribed = false;
      this.update();
    };
    subscriber.on('close', lost);
    subscriber.on('end', lost);
    subscriber.on('reconnecting', lost);
    if (subscriber.status === 'ready') subscribe();
    this.offState = this.kv.onStateChange((state) => {
      this.update();
      if (state === 'ready') this.republish();
    });
  }

  /** Tells other processes about committed changes (the local cache was invalidated already). */
  publish(changes: readonly CommittedChange[]): void {
    if (this.kv.kind === 'memory') return;
    this.pending.push(...changes);
    if (this.pending.length > MAX_PENDING) this.pending = CACHE_KINDS.map((kind) => ({ kind, id: '*' }));
    this.republish();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.offState();
    this.subscriber?.disconnect(false);
    this.subscribed = false;
    this.caches.setLive(false);
  }

  private update(): void {
    this.caches.setLive(this.subscribed && this.kv.state() === 'ready');
  }

  /**
   * Publishes what is pending. A change whose publish failed (Redis lost at this writer) stays
   * pending and goes out when the store returns; processes that were cut off as well have
   * emptied their caches meanwhile, and one that was not is stale until then or its TTL.
   */
  private republish(): void {
    const redis = this.kv.redis;
    if (!redis || this.kv.state() !== 'ready' || this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const pipeline = redis.pipeline();
    for (const change of batch) pipeline.publish(cacheChannel(this.kv.prefix, change.kind), change.id);
    pipeline.exec().then(
      (results) => {
        const failed = batch.filter((_, i) => results?.[i]?.[0]);
        if (failed.length > 0) this.requeue(failed);
      },
      () => this.requeue(batch),
    );
  }

  private requeue(changes: CommittedChange[]): void {
    if (this.closed) return;
    this.pending.unshift(...changes);
    if (this.pending.length > MAX_PENDING) this.pending = CACHE_KINDS.map((kind) => ({ kind, id: '*' }));
  }
}

/**
 * Publishes changes committed by a process that runs no cache bus (an operator command): one
 * short Redis connection. Resolves false when Redis did not take them; running processes then
 * honour the change when their entries expire (cache.ttl_seconds).
 */
export async function publishChangesOnce(options: { url: string; prefix: string; timeoutMs?: number }, changes: readonly CommittedChange[]): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(options.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: options.timeoutMs ?? 2000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    for (const change of changes) await redis.publish(cacheChannel(options.prefix, change.kind), change.id);
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect(false);
  }
}
