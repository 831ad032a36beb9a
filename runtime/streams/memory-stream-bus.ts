import { EventEmitter } from 'node:events';
import type { OnStreamRecords, PublishOptions, StreamBus, StreamFollower, StreamPage } from './stream-bus.js';
import type { StreamEvent, StreamRecord, TailSnapshot } from './stream-event.js';
import { STREAM_START_ID, compareStreamIds } from './stream-ids.js';

interface MemoryStream {
  records: StreamRecord[];
  /** The largest id the length bound removed (Redis's max-deleted-entry-id). */
  maxDeleted: string;
}

/** Runs whose fence the in-process bus remembers (a zombie attempt is a concern of runs taken over recently). */
const FENCES_KEPT = 100_000;

/** The in-process bus (single `all` process): the Redis bus's contract, kept in memory. */
export class MemoryStreamBus implements StreamBus {
  readonly local = new EventEmitter();
  private readonly streams = new Map<string, MemoryStream>();
  private readonly tails = new Map<string, TailSnapshot>();
  /**
   * Each run's fence (PublishOptions.fence): the highest attempt whose snapshot was taken. Kept
   * past clearTail, as the Redis bus keeps its fence key; bounded (the runs written longest ago
   * go first, FENCES_KEPT), where Redis expires the key with the stream.
   */
  private readonly fences = new Map<string, number>();
  private lastMs = 0;
  private seq = 0;

  constructor(private readonly maxLength: number) {
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

  /** In process, every publish is delivered as it is made: `options.urgent` changes nothing here. */
  async publish(threadId: string, events: StreamEvent[], options?: PublishOptions): Promise<Array<string | null>> {
    const fence = options?.fence;
    if (fence && (this.fences.get(fence.run_id) ?? 0) > fence.attempt) return events.map(() => null);
    let stream = this.streams.get(threadId);
    if (!stream) this.streams.set(threadId, (stream = { records: [], maxDeleted: STREAM_START_ID }));
    const ids = events.map((event) => {
      const record = { id: this.nextId(), event };
      stream.records.push(record);
      this.local.emit(threadId, record);
      return record.id;
    });
    if (stream.records.length > this.maxLength) {
      const removed = stream.records.splice(0, stream.records.length - this.maxLength);
      stream.maxDeleted = removed[removed.length - 1]?.id ?? stream.maxDeleted;
    }
    return ids;
  }

  async publishAnchored(threadId: string, tail: { run_id: string; attempt: number }, events: StreamEvent[], options?: PublishOptions): Promise<{ anchored: boolean; ids: Array<string | null> }> {
    const last = await this.lastId(threadId);
    const anchored = await this.setTail({ run_id: tail.run_id, attempt: tail.attempt, items: [], last_stream_id: last ?? '0-0' });
    return { anchored, ids: await this.publish(threadId, events, { ...options, fence: tail }) };
  }

  async read(threadId: string, afterId: string, count: number): Promise<StreamPage> {
    return this.readNow(threadId, afterId, count);
  }

  private readNow(threadId: string, afterId: string, count: number): StreamPage {
    const stream = this.streams.get(threadId);
    if (!stream) return { records: [], trimmed: false };
    const records = stream.records.filter((r) => compareStreamIds(r.id, afterId) > 0).slice(0, count);
    return { records, trimmed: compareStreamIds(stream.maxDeleted, afterId) > 0 };
  }

  async lastId(threadId: string): Promise<string | null> {
    const records = this.streams.get(threadId)?.records;
    return records?.[records.length - 1]?.id ?? null;
  }

  follower(onRecords: OnStreamRecords, onError: (error: unknown) => void): StreamFollower {
    const listeners = new Map<string, (record: StreamRecord) => void>();
    const unfollow = (threadId: string): void => {
      const listener = listeners.get(threadId);
      if (listener) this.local.off(threadId, listener);
      listeners.delete(threadId);
    };
    const follow = (threadId: string, afterId: string): void => {
      unfollow(threadId);
      let cursor = afterId;
      const deliver = (records: StreamRecord[]): void => {
        const fresh = records.filter((r) => compareStreamIds(r.id, cursor) > 0);
        const last = fresh[fresh.length - 1];
        if (!last) return;
        cursor = last.id;
        // The fan-out runs inside publish(): never let it fail the publisher.
        try {
          onRecords(threadId, fresh);
        } catch (error) {
          onError(error);
        }
      };
      const listener = (record: StreamRecord): void => deliver([record]);
      listeners.set(threadId, listener);
      this.local.on(threadId, listener);
      // Synchronous with the listener registration: no publish can fall between the two.
      deliver(this.readNow(threadId, afterId, Number.MAX_SAFE_INTEGER).records);
    };
    return {
      follow,
      unfollow,
      unfollowAll: () => [...listeners.keys()].forEach(unfollow),
      close: () => [...listeners.keys()].forEach(unfollow),
    };
  }

  async setTail(snapshot: TailSnapshot): Promise<boolean> {
    // Refused when the run's fence is past this attempt; raises it (as the Redis bus's SET_TAIL_SCRIPT).
    if ((this.fences.get(snapshot.run_id) ?? 0) > snapshot.attempt) return false;
    this.tails.set(snapshot.run_id, snapshot);
    this.fences.delete(snapshot.run_id); // re-inserted last: the map's order is its age
    this.fences.set(snapshot.run_id, snapshot.attempt);
    if (this.fences.size > FENCES_KEPT) this.fences.delete(this.fences.keys().next().value!);
    return true;
  }

  async getTail(runId: string): Promise<TailSnapshot | null> {
    return this.tails.get(runId) ?? null;
  }

  async clearTail(runId: string): Promise<void> {
    this.tails.delete(runId);
  }
}
