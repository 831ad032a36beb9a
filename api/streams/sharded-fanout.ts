import type { Uws } from '../../runtime/index.js';
import type { EncodedRecord, WsFormat } from './stream-frames.js';
import type { Placement, SseSink, WsPlacement } from './stream-subscriber.js';

/** A thread's subscribers are spread over shards of at most this many before a new shard opens. */
export const FANOUT_SHARD_SIZE = 512;
/** Shards per thread at most (beyond, shards grow past FANOUT_SHARD_SIZE). */
export const FANOUT_MAX_SHARDS = 32;
/** Subscribers one turn of the event loop writes to before the rest of a record's fan-out yields. */
export const FANOUT_SLICE = 512;

export interface FanOutLimits {
  readonly shardSize: number;
  readonly maxShards: number;
  /** Subscribers written to per turn of the event loop (whole shards: at least one per turn). */
  readonly slice: number;
}

const DEFAULT_LIMITS: FanOutLimits = { shardSize: FANOUT_SHARD_SIZE, maxShards: FANOUT_MAX_SHARDS, slice: FANOUT_SLICE };

/**
 * One shard: a uWS topic per WebSocket frame format, its SSE subscribers, and how far through
 * the channel's records it has been published.
 */
interface Shard {
  readonly index: number;
  /** Sequence number (see ShardedFanOut.head) up to which records have been published to this shard. */
  sent: number;
  /** WebSocket subscribers joined per format (for balancing and the slice; uWS's own count decides whether to publish). */
  json: number;
  msgpack: number;
  readonly sse: Set<SseSink>;
}

function members(shard: Shard): number {
  return shard.json + shard.msgpack + shard.sse.size;
}


/**
 * One thread's live fan-out in this process, WebSocket and SSE alike. uWS writes a published
 * record to every socket of a topic in one go (a system call per socket, ~6–8 µs on loopback),
 * and SSE subscribers are one write each, so 10,000 subscribers of a thread hold the process's
 * only thread for ~60–80 ms per record — behind it wait the worker host's attempt messages, the
 * stream reader's next reply and the next record. The subscribers are therefore spread over
 * shards (a uWS topic per shard and frame format, a set of SSE sinks per shard), and a record is
 * published shard after shard, at most `slice` subscribers per turn of the event loop; the rest
 * of the shards are served on the next turns (setImmediate). A record that arrives while
 * shards are still behind joins their backlog, so those subscribers get both in one write. A
 * thread with at most `shardSize` subscribers has one shard and is published at once, in the
 * caller's turn, exactly as before sharding.
 *
 * Exactly once, in order: records get consecutive sequence numbers as they are enqueued; a
 * shard's `sent` only moves forward, and publishing a shard sends it the records in
 * [sent, head) in order, then sets sent = head (uWS writes a topic's messages to each socket in
 * publish order; an SSE sink gets them as one chunk). A joining subscriber has been sent (by
 * replay) every record enqueued so far; its shard is first published up to head (flush), then
 * it joins — a WebSocket subscribes to the shard's topic, an SSE sink enters the shard's set —
 * in the same synchronous step. uWS delivers a publish only to the topic's subscribers at
 * publish time and the set is read when the shard is published, so the joiner gets none of the
 * records before head again and every one after it.
 */
export class ShardedFanOut {
  private readonly shards: Shard[] = [];
  /** Records not yet published to every shard; pending[0] has sequence number `base`. */
  private pending: EncodedRecord[] = [];
  private base = 0;
  /** Sequence number the next enqueued record gets. */
  private head = 0;
  /** The shard the next turn starts with (round robin, so no shard is always served last). */
  private nextShard = 0;
  private scheduled: NodeJS.Immediate | null = null;
  private closed = false;

  constructor(
    private readonly app: Uws.TemplatedApp,
    private readonly topicPrefix: string,
    private readonly limits: FanOutLimits = DEFAULT_LIMITS,
  ) {}

  /** Publishes records the channel has just read (in stream order): this turn's slice now, the rest on later turns. */
  enqueue(records: readonly EncodedRecord[]): void {
    if (this.closed || records.length === 0) return;
    if (this.shards.length === 0) {
      // Nobody subscribed: nothing to hold (a joiner's replay covers these).
      this.head += records.length;
      this.base = this.head;
      return;
    }
    this.pending.push(...records);
    this.head += records.length;
    this.pump();
  }

  /** Places a WebSocket subscriber that has every record enqueued so far; subscribe it to the topic now (same step). */
  joinWs(format: WsFormat): WsPlacement {
    const shard = this.flushed(this.pick());
    shard[format]++;
    return { shard: shard.index, topic: this.topic(shard.index, format) };
  }

  /** Places an SSE subscriber that has every record enqueued so far: it gets every later one. */
  joinSse(sink: SseSink): Placement {
    const shard = this.flushed(this.pick());
    shard.sse.add(sink);
    return { shard: shard.index };
  }

  leaveWs(placement: Placement, format: WsFormat): void {
    const shard = this.shards[placement.shard];
    if (shard && shard[format] > 0) shard[format]--;
  }

  leaveSse(placement: Placement, sink: SseSink): void {
    this.shards[placement.shard]?.sse.delete(sink);
  }

  /** The shard, published up to head (a joiner already has every record before it). */
  private flushed(shard: Shard): Shard {
    if (shard.sent !== this.head) {
      this.publish(shard);
      this.trim();
    }
    return shard;
  }

  /** Drops the backlog and stops the turns (the channel is gone; its subscribers are finished or left). */
  close(): void {
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    this.pending = [];
  }

  private topic(shard: number, format: WsFormat): string {
    return `${this.topicPrefix}:${format}:${shard}`;
  }

  /** The least-populated shard, or a new one once every shard holds `shardSize`. */
  private pick(): Shard {
    let best: Shard | undefined;
    for (const shard of this.shards) if (!best || members(shard) < members(best)) best = shard;
    if (best && (members(best) < this.limits.shardSize || this.shards.length >= this.limits.maxShards)) return best;
    // A new shard has nobody to send the backlog to: it starts at head.
    const shard: Shard = { index: this.shards.length, sent: this.head, json: 0, msgpack: 0, sse: new Set() };
    this.shards.push(shard);
    return shard;
  }

  /** One turn: shards behind head, round robin, until the slice's subscribers are spent; then yield. */
  private pump(): void {
    let written = 0;
    const count = this.shards.length;
    for (let i = 0; i < count && written < this.limits.slice; i++) {
      const shard = this.shards[(this.nextShard + i) % count]!;
      if (shard.sent === this.head) continue;
      written += this.publish(shard);
      if (written >= this.limits.slice) this.nextShard = (this.nextShard + i + 1) % count;
    }
    this.trim();
    if (this.base !== this.head && !this.scheduled && !this.closed) {
      this.scheduled = setImmediate(() => {
        this.scheduled = null;
        if (!this.closed) this.pump();
      });
    }
  }

  /** Sends the shard every record it has not had, in order; returns the subscribers written to. */
  private publish(shard: Shard): number {
    const from = shard.sent - this.base;
    shard.sent = this.head;
    const json = this.topic(shard.index, 'json');
    const pack = this.topic(shard.index, 'msgpack');
    const toJson = this.app.numSubscribers(json) > 0;
    const toPack = this.app.numSubscribers(pack) > 0;
    for (let i = from; i < this.pending.length; i++) {
      const record = this.pending[i]!;
      if (toJson) this.app.publish(json, record.wsJson(), false);
      if (toPack) this.app.publish(pack, record.msgpack(), true);
    }
    if (shard.sse.size > 0) {
      const chunk = this.pending.length - from === 1 ? this.pending[from]!.sse() : this.pending.slice(from).map((r) => r.sse()).join('');
      // A sink may leave while being written (finished for backpressure): Set iteration allows it.
      for (const sink of shard.sse) sink.write(chunk);
    }
    return members(shard);
  }

  /** Forgets records every shard has had. */
  private trim(): void {
    let low = this.head;
    for (const shard of this.shards) if (shard.sent < low) low = shard.sent;
    if (low === this.base) return;
    this.pending.splice(0, low - this.base);
    this.base = low;
  }
}
