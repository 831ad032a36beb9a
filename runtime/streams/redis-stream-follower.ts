import type { Redis } from 'ioredis';
import type { Kv } from '../kv/index.js';
import type { OnStreamRecords, StreamFollower } from './stream-bus.js';
import type { StreamEvent, StreamRecord } from './stream-event.js';
import { compareStreamIds } from './stream-ids.js';

const READ_COUNT = 500;
/** Every followed thread is read this often regardless of bells (see the class comment). */
const SWEEP_MS = 1000;
/** Threads per XREAD of the sweep. */
const SWEEP_CHUNK = 500;

interface Follow {
  cursor: string;
  /** Changes on every follow(): a reply to a read issued before it belongs to an older follow. */
  token: number;
  /** A read of this thread is on its way; `again`: a bell rang meanwhile, read once more after it. */
  reading: boolean;
  again: boolean;
}

/** XREAD answers [key, [[id, fields], …]] per stream with records, or null. */
type XReadReply = Array<[string, Array<[string, string[]]>]> | null;

/** The channel a publisher rings after appending to a thread's stream (RedisStreamBus.addEvents). */
export function bellChannel(streamKey: string): string {
  return `${streamKey}:bell`;
}

/**
 * The fan-out's reader for every followed thread of this process. A publisher appends a
 * thread's records and, in the same pipeline after them, PUBLISHes to the thread's bell channel
 * (RedisStreamBus); this follower SUBSCRIBEs to the bells of the threads it follows, on a
 * dedicated connection, and reads a thread's stream (XRANGE after its cursor) when its bell
 * rings — so a record costs one read of its own thread, whatever number of threads the process
 * follows. (The previous design re-issued one blocking XREAD over every followed thread after
 * each read: O(threads followed) per read in arguments sent and keys Redis scanned; and a thread
 * followed while that read was blocked needed CLIENT UNBLOCK to join it, waiting up to the
 * 2 s block when the unblock missed — test/runtime/streams/redis-stream-follower.test.ts.)
 *
 * No record is missed: Redis runs a pipeline in order, so when a bell arrives its records are in
 * the stream; a follow reads once as soon as its subscription is confirmed (what was appended
 * before the bell could reach it); a subscriber connection that was lost reads every follow when
 * it is back (bells are not queued for a disconnected subscriber); and every followed thread is
 * read every SWEEP_MS anyway (one XREAD per SWEEP_CHUNK threads, not blocking), which bounds the
 * delay should a bell be lost some other way, e.g. records appended by a process that predates
 * the bells during a rolling upgrade.
 *
 * Order and exactly-once: every read goes over one connection, whose replies come back in the
 * order the reads were sent; a read's records are filtered by the follow's cursor when its reply
 * is delivered (only ids after it), the cursor advances to the last delivered id, and a reply is
 * delivered only to the follow it was issued for (token). Two reads of one thread in flight
 * (a bell's and the sweep's) therefore deliver each record once, in stream order.
 */
export class RedisStreamFollower implements StreamFollower {
  private readonly follows = new Map<string, Follow>();
  /** The bell subscriptions (its own connection: a subscribed connection runs no other command). */
  private bells: Redis | null = null;
  /** The bell channel → thread id of each follow. */
  private readonly byChannel = new Map<string, string>();
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping = false;
  private tokens = 0;
  private closed = false;

  constructor(
    private readonly kv: Kv,
    private readonly keyOf: (threadId: string) => string,
    private readonly onRecords: OnStreamRecords,
    private readonly onError: (error: unknown) => void,
  ) {}

  follow(threadId: string, afterId: string): void {
    if (this.closed) return;
    const token = ++this.tokens;
    this.follows.set(threadId, { cursor: afterId, token, reading: false, again: false });
    const bells = this.connect();
    if (!bells) return;
    const channel = bellChannel(this.keyOf(threadId));
    this.byChannel.set(channel, threadId);
    // Read once the subscription is in place: records appended before it rang no bell here.
    bells.subscribe(channel).then(
      () => this.read(threadId, token),
      (error: unknown) => {
        this.onError(error);
        this.read(threadId, token); // the sweep keeps it followed meanwhile
      },
    );
    this.sweep();
  }

  unfollow(threadId: string): void {
    // A read on its way is dropped on arrival (no follow, or another token).
    if (!this.follows.delete(threadId)) return;
    const channel = bellChannel(this.keyOf(threadId));
    this.byChannel.delete(channel);
    this.bells?.unsubscribe(channel).catch(() => undefined);
    if (this.follows.size === 0) this.stopSweep();
  }

  unfollowAll(): void {
    for (const threadId of [...this.follows.keys()]) this.unfollow(threadId);
  }

  close(): void {
    this.closed = true;
    this.follows.clear();
    this.byChannel.clear();
    this.stopSweep();
    this.bells?.disconnect(false);
    this.bells = null;
  }

  private connect(): Redis | null {
    if (this.bells) return this.bells;
    const bells = this.kv.duplicate();
    if (!bells) return null;
    let connected = false;
    bells.on('message', (channel: string) => {
      const threadId = this.byChannel.get(channel);
      const follow = threadId === undefined ? undefined : this.follows.get(threadId);
      if (threadId !== undefined && follow) this.read(threadId, follow.token);
    });
    // Back after a loss (ioredis subscribes again): bells rung meanwhile were not kept for it.
    bells.on('ready', () => {
      if (connected) for (const [threadId, follow] of this.follows) this.read(threadId, follow.token);
      connected = true;
    });
    this.bells = bells;
    return bells;
  }

  /** Reads the thread after its cursor; one read per thread on its way, and one more if it rang meanwhile. */
  private read(threadId: string, token: number): void {
    const follow = this.follows.get(threadId);
    const redis = this.kv.redis;
    if (!follow || follow.token !== token || !redis || this.closed) return;
    if (follow.reading) {
      follow.again = true;
      return;
    }
    follow.reading = true;
    follow.again = false;
    redis.xrange(this.keyOf(threadId), `(${follow.cursor}`, '+', 'COUNT', READ_COUNT).then(
      (entries) => {
        follow.reading = false;
        const full = this.deliver(threadId, token, entries as Array<[string, string[]]>) >= READ_COUNT;
        if (full || follow.again) this.read(threadId, token);
      },
      (error: unknown) => {
        follow.reading = false;
        if (this.follows.get(threadId)?.token === token) this.onError(error); // the sweep reads it again
      },
    );
  }

  /** Delivers what a read of the follow `token` returned; the number of entries it returned. */
  private deliver(threadId: string, token: number, entries: Array<[string, string[]]>): number {
    const current = this.follows.get(threadId);
    if (!current || current.token !== token) return 0;
    const records: StreamRecord[] = [];
    for (const [id, fields] of entries) {
      if (compareStreamIds(id, current.cursor) <= 0) continue;
      const json = fields[1] ?? 'null';
      records.push({ id, event: JSON.parse(json) as StreamEvent, json });
    }
    const last = records[records.length - 1];
    if (last) {
      current.cursor = last.id;
      try {
        this.onRecords(threadId, records);
      } catch (error) {
        this.onError(error);
      }
    }
    return entries.length;
  }

  private sweep(): void {
    if (this.sweeper || this.closed) return;
    this.sweeper = setInterval(() => void this.sweepOnce(), SWEEP_MS);
    this.sweeper.unref();
  }

  private stopSweep(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Reads every followed thread once, SWEEP_CHUNK per XREAD (not blocking). */
  private async sweepOnce(): Promise<void> {
    const redis = this.kv.redis;
    if (this.sweeping || !redis || this.kv.state() !== 'ready') return;
    this.sweeping = true;
    try {
      const all = [...this.follows].map(([threadId, follow]) => ({ threadId, key: this.keyOf(threadId), cursor: follow.cursor, token: follow.token }));
      for (let i = 0; i < all.length && !this.closed; i += SWEEP_CHUNK) {
        const chunk = all.slice(i, i + SWEEP_CHUNK);
        const byKey = new Map(chunk.map((c) => [c.key, c]));
        const reply = (await redis.xread('COUNT', READ_COUNT, 'STREAMS', ...chunk.map((c) => c.key), ...chunk.map((c) => c.cursor))) as XReadReply;
        for (const [key, entries] of reply ?? []) {
          const issued = byKey.get(key);
          if (issued && this.deliver(issued.threadId, issued.token, entries) >= READ_COUNT) this.read(issued.threadId, issued.token);
        }
      }
    } catch (error) {
      if (!this.closed) this.onError(error);
    } finally {
      this.sweeping = false;
    }
  }
}
