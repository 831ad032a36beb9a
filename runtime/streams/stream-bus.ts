import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Kv } from '../kv/index.js';
import type { StreamEvent, StreamRecord, TailSnapshot } from './stream-event.js';

/**
 * Carries thread events from the process that produces them (the attempt's host) to the
 * processes that serve subscribers. Redis: one stream per thread (XADD with an approximate
 * MAXLEN bound and a TTL), ids are Redis stream ids and totally ordered per thread. The
 * in-process bus (single `all` process) keeps the same contract in memory.
 * Publishing never blocks the run: while the store is lost, publish resolves with nulls and
 * the items still commit to PostgreSQL (clients re-read GET /runs/{id}/items).
 */
export interface StreamBus {
  publish(threadId: string, events: StreamEvent[]): Promise<Array<string | null>>;
  /** Records after `afterId` (exclusive), oldest first; `trimmed` when afterId is older than the retained window. */
  read(threadId: string, afterId: string, count: number): Promise<{ records: StreamRecord[]; trimmed: boolean }>;
  lastId(threadId: string): Promise<string | null>;
  setTail(snapshot: TailSnapshot): Promise<void>;
  getTail(runId: string): Promise<TailSnapshot | null>;
  clearTail(runId: string): Promise<void>;
  /** Live records as they are published (memory bus only; the Redis fan-out reads with XREAD). */
  readonly local: EventEmitter | null;
}

export const STREAM_MAXLEN = 10_000;
const STREAM_TTL_SECONDS = 24 * 3600;
const TAIL_TTL_SECONDS = 3600;

export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am !== bm ? am - bm : as - bs;
}

export function createStreamBus(kv: Kv): StreamBus {
  return kv.redis ? new RedisStreamBus(kv.redis, kv) : new MemoryStreamBus();
}

class RedisStreamBus implements StreamBus {
  readonly local = null;
  constructor(
    private readonly redis: Redis,
    private readonly kv: Kv,
  ) {}

  private key = (threadId: string) => `${this.kv.prefix}stream:${threadId}`;

  async publish(threadId: string, events: StreamEvent[]): Promise<Array<string | null>> {
    if (events.length === 0 || this.kv.state() !== 'ready') return events.map(() => null);
    const key = this.key(threadId);
    const pipeline = this.redis.pipeline();
    for (const event of events) pipeline.xadd(key, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'e', JSON.stringify(event));
    pipeline.expire(key, STREAM_TTL_SECONDS);
    try {
      const results = (await pipeline.exec()) ?? [];
      return events.map((_, i) => {
        const [error, id] = results[i] ?? [new Error('missing'), null];
        return error ? null : (id as string);
      });
    } catch {
      return events.map(() => null);
    }
  }

  async read(threadId: string, afterId: string, count: number): Promise<{ records: StreamRecord[]; trimmed: boolean }> {
    const key = this.key(threadId);
    const [entries, first] = await Promise.all([
      this.redis.xrange(key, `(${afterId}`, '+', 'COUNT', count),
      this.redis.xrange(key, '-', '+', 'COUNT', 1),
    ]);
    const oldest = first[0]?.[0];
    const trimmed = afterId !== '0-0' && oldest !== undefined && compareStreamIds(afterId, oldest) < 0 && entries[0]?.[0] === oldest;
    return { records: entries.map(([id, fields]) => ({ id, event: JSON.parse(fields[1] ?? 'null') as StreamEvent })), trimmed };
  }

  async lastId(threadId: string): Promise<string | null> {
    const last = await this.redis.xrevrange(this.key(threadId), '+', '-', 'COUNT', 1);
    return last[0]?.[0] ?? null;
  }

  async setTail(snapshot: TailSnapshot): Promise<void> {
    if (this.kv.state() !== 'ready') return;
    await this.redis.set(`${this.kv.prefix}tail:${snapshot.run_id}`, JSON.stringify(snapshot), 'EX', TAIL_TTL_SECONDS).catch(() => undefined);
  }

  async getTail(runId: string): Promise<TailSnapshot | null> {
    if (this.kv.state() !== 'ready') return null;
    const text = await this.redis.get(`${this.kv.prefix}tail:${runId}`).catch(() => null);
    return text ? (JSON.parse(text) as TailSnapshot) : null;
  }

  async clearTail(runId: string): Promise<void> {
    if (this.kv.state() !== 'ready') return;
    await this.redis.del(`${this.kv.prefix}tail:${runId}`).catch(() => undefined);
  }
}

class MemoryStreamBus implements StreamBus {
  readonly local = new EventEmitter();
  private readonly streams = new Map<string, StreamRecord[]>();
  private readonly tails = new Map<string, TailSnapshot>();
  private lastMs = 0;
  private seq = 0;

  constructor() {
    this.local.setMaxListeners(0);
  }

  private nextId(): string {
    const now = Date.now();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.seq = 0;
    } else this.seq++;
    return `${this.lastMs}-${this.seq}`;
  }

  async publish(threadId: string, events: StreamEvent[]): Promise<Array<string | null>> {
    const stream = this.streams.get(threadId) ?? [];
    this.streams.set(threadId, stream);
    const ids = events.map((event) => {
      const record = { id: this.nextId(), event };
      stream.push(record);
      this.local.emit(threadId, record);
      return record.id;
    });
    if (stream.length > STREAM_MAXLEN) stream.splice(0, stream.length - STREAM_MAXLEN);
    return ids;
  }

  async read(threadId: string, afterId: string, count: number): Promise<{ records: StreamRecord[]; trimmed: boolean }> {
    const stream = this.streams.get(threadId) ?? [];
    const records = stream.filter((r) => compareStreamIds(r.id, afterId) > 0).slice(0, count);
    const oldest = stream[0]?.id;
    return { records, trimmed: afterId !== '0-0' && oldest !== undefined && compareStreamIds(afterId, oldest) < 0 && records[0]?.id === oldest };
  }

  async lastId(threadId: string): Promise<string | null> {
    const stream = this.streams.get(threadId);
    return stream?.[stream.length - 1]?.id ?? null;
  }

  async setTail(snapshot: TailSnapshot): Promise<void> {
    this.tails.set(snapshot.run_id, snapshot);
  }

  async getTail(runId: string): Promise<TailSnapshot | null> {
    return this.tails.get(runId) ?? null;
  }

  async clearTail(runId: string): Promise<void> {
    this.tails.delete(runId);
  }
}
