/** One cached value, with what invalidation matches it by. */
export interface CacheEntry<V = unknown> {
  value: V;
  /** Date.now() after which the entry is never served (its TTL, or an expiry the value carries). */
  expiresAt: number;
  /** Ids a change names (user, api key, session, workspace…): see ReadCaches.invalidate. */
  tags: readonly string[];
}

/**
 * A bounded map in least-recently-used order (a Map keeps insertion order: a hit moves the
 * key to the end, an insert beyond `maxEntries` drops the first). Memory is bounded by the
 * entry count, which is what cache.max_entries configures.
 */
export class LruCache {
  private readonly map = new Map<string, CacheEntry>();

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string, now: number): CacheEntry | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    this.map.delete(key);
    // An entry never outlives the expiry it carries (session expires_at, the TTL).
    if (entry.expiresAt <= now) return undefined;
    this.map.set(key, entry);
    return entry;
  }

  set(key: string, entry: CacheEntry): void {
    this.map.delete(key);
    this.map.set(key, entry);
    while (this.map.size > this.maxEntries) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.map.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  /** Drops every entry the predicate matches (invalidations are rare: a scan is fine). */
  deleteWhere(match: (key: string, entry: CacheEntry) => boolean): void {
    for (const [key, entry] of this.map) if (match(key, entry)) this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}
