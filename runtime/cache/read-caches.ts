import type { CommittedChange } from '../db/index.js';
import { LruCache } from './lru-cache.js';

export type CacheKind = CommittedChange['kind'];
export const CACHE_KINDS: readonly CacheKind[] = ['api_key', 'session', 'user', 'membership', 'agent', 'model', 'provider', 'subscription'];

/** What a loaded value is cached with: the change tags that drop it, and an expiry it carries. */
export interface CacheTags {
  tags: readonly string[];
  /** Epoch milliseconds; the entry is dropped then even without a change (session expires_at). */
  expiresAt?: number;
}

export const tagOf = (kind: CacheKind, id: string): string => `${kind}:${id}`;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as Record<string, unknown>)) deepFreeze(inner);
  }
  return value;
}

/**
 * The per-process read cache of principals and hot resources (runtime/cache/README in the
 * project README, "Caching"). The staleness rule it enforces:
 * - a change committed by this process drops the entries it touches before the writer's
 *   transaction helper returns (committed-changes.ts), so the writer's next request reads the
 *   database;
 * - other processes drop them when the change's pub/sub message arrives (cache-bus.ts);
 * - while that delivery cannot be trusted (Redis lost, subscription not yet confirmed, a
 *   reconnect not yet resubscribed) the cache is not live: every read goes to the database and
 *   nothing is stored, and it is emptied when it goes live again (messages sent meanwhile are
 *   lost);
 * - no entry is served past its TTL (cache.ttl_seconds, the bound when a message is lost in a
 *   way no connection event shows) or past an expiry its value carries;
 * - at most cache.max_entries entries are held (least recently used dropped first).
 * Values are frozen: they are shared by every request that hits them.
 */
export class ReadCaches {
  private readonly lru: LruCache;
  private live = false;
  /**
   * Bumped by every invalidation and flush. A read stores what it loaded only when no
   * invalidation happened while it was loading: otherwise a row read before a commit could be
   * stored after that commit's invalidation and outlive it.
   */
  private epoch = 0;
  /** Per API key: when this process last recorded its use (or the row said it was used). */
  private readonly touches = new Map<string, number>();

  constructor(private readonly options: { enabled: boolean; maxEntries: number; ttlMs: number }) {
    this.lru = new LruCache(Math.max(1, options.maxEntries));
  }

  get size(): number {
    return this.lru.size;
  }

  isLive(): boolean {
    return this.live;
  }

  /** Turns serving on or off; every switch empties the cache (see the class comment). */
  setLive(live: boolean): void {
    const next = live && this.options.enabled;
    if (next === this.live) return;
    this.live = next;
    this.flush();
  }

  flush(): void {
    this.epoch++;
    this.lru.clear();
  }

  /**
   * The cached value for `key`, else `load()` (stored when not null). `accept` re-checks a hit
   * against the request (e.g. that the row belongs to the request's workspace); a refused hit
   * is loaded from the database like a miss.
   */
  async read<V>(key: string, load: () => Promise<V | null>, tagsOf: (value: V) => CacheTags, accept?: (value: V) => boolean): Promise<V | null> {
    if (!this.live) return load();
    const now = Date.now();
    const hit = this.lru.get(key, now);
    if (hit !== undefined && (accept === undefined || accept(hit.value as V))) return hit.value as V;
    const epoch = this.epoch;
    const value = await load();
    if (value !== null && this.live && epoch === this.epoch) {
      const { tags, expiresAt } = tagsOf(value);
      const ttlEnd = Date.now() + this.options.ttlMs;
      this.lru.set(key, { value: deepFreeze(value), tags, expiresAt: expiresAt === undefined ? ttlEnd : Math.min(ttlEnd, expiresAt) });
    }
    return value;
  }

  /** The entry under `key` if cached and live (no load): for per-entry state such as a touch time. */
  peek(key: string): unknown {
    return this.live ? this.lru.get(key, Date.now())?.value : undefined;
  }

  /**
   * Whether to record a use of API key `id` now: at most once a minute per key and process,
   * judged from an in-process timestamp (seeded with the row's last_used_at), so a request
   * served from the cache costs no round trip. Bounded like the cache (emptied when full).
   */
  shouldTouch(id: string, rowLastUsedMs: number, now = Date.now()): boolean {
    const last = Math.max(this.touches.get(id) ?? 0, rowLastUsedMs);
    if (now - last <= 60_000) return false;
    if (this.touches.size >= this.options.maxEntries) this.touches.clear();
    this.touches.set(id, now);
    return true;
  }

  /** Drops every entry a change names; id '*' drops everything (a flush message). */
  invalidate(changes: readonly CommittedChange[]): void {
    this.epoch++;
    for (const change of changes) {
      if (change.id === '*') return void this.lru.clear();
      const tag = tagOf(change.kind, change.id);
      this.lru.deleteWhere((_key, entry) => entry.tags.includes(tag));
    }
  }
}
