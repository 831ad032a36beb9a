import type { Uws } from '../../runtime/index.js';
import type { EncodedRecord, WsFormat } from './stream-frames.js';

/** A thread's WebSocket subscribers are spread over shards of at most this many before a new shard opens. */
export const WS_SHARD_SIZE = 512;
/** Shards per thread at most (beyond, shards grow past WS_SHARD_SIZE). */
export const WS_MAX_SHARDS = 32;
/** Sockets one turn of the event loop writes to before the rest of a record's fan-out yields. */
export const WS_SLICE_SOCKETS = 512;

export interface WsFanOutLimits {
  readonly shardSize: number;
  readonly maxShards: number;
  readonly sliceSockets: number;
}

const DEFAULT_LIMITS: WsFanOutLimits = { shardSize: WS_SHARD_SIZE, maxShards: WS_MAX_SHARDS, sliceSockets: WS_SLICE_SOCKETS };

/** One shard: a uWS topic per frame format, and how far through the channel's records it has been published. */
interface Shard {
  readonly index: number;
  /** Sequence number (see WsFanOut.head) up to which records have been published to this shard. */
  sent: number;
  /** Subscribers joined per format (for balancing and the slice budget; uWS's own count decides whether to publish). */
  json: number;
  msgpack: number;
}

/** Where a WebSocket subscriber was placed: the topic it subscribes to, and the shard to leave. */
export interface WsPlacement {
  readonly topic: string;
  readonly shard: number;
}

/**
 * The WebSocket side of one thread's fan-out. uWS writes a published record to every socket of
 * a topic in one go (a system call per socket, ~6–8 µs on loopback), so one topic of 10,000
 * sockets holds the process's only thread for ~60–80 ms per record — behind it wait the
 * worker host's attempt messages, the stream reader's next reply and the next record. The
 * subscribers are therefore spread over shards (a topic per shard and format), and a record
 * is published shard after shard, at most `sliceSockets` sockets per turn of the event loop;
 * the rest of the shards are served on the next turns (setImmediate). A record that arrives
 * while shards are still behind joins their backlog, so those sockets get both in one write.
 * A thread with at most `shardSize` subscribers has one shard and is published at once, in the
 * caller's turn, exactly as one topic would be.
 *
 * Exactly once, in order: records get consecutive sequence numbers as they are enqueued; a
 * shard's `sent` only moves forward, and publishing a shard sends it the records in
 * [sent, head) in order, then sets sent = head (uWS writes a topic's messages to each socket in
 * publish order). A joining subscriber has been sent (by replay) every record enqueued so far;
 * its shard is first published up to head (flush), then it subscribes, in the same
 * synchronous step — uWS delivers a publish only to the topic's subscribers at publish time, so
 * it gets none of the records before head again and every one after it.
 */
export class WsFanOut {
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
    private readonly limits: WsFanOutLimits = DEFAULT_LIMITS,
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

  /** Places a subscriber that has every record enqueued so far; subscribe it to the topic now (same step). */
  join(format: WsFormat): WsPlacement {
    const shard = this.pick();
    if (shard.sent !== this.head) this.publish(shard);
    shard[format]++;
    this.trim();
    return { topic: this.topic(shard.index, format), shard: shard.index };
  }

  leave(placement: WsPlacement, format: WsFormat): void {
    const shard = this.shards[placement.shard];
    if (shard && shard[format] > 0) shard[format]--;
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
    for (const shard of this.shards) if (!best || shard.json + shard.msgpack < best.json + best.msgpack) best = shard;
    if (best && (best.json + best.msgpack < this.limits.shardSize || this.shards.length >= this.limits.maxShards)) return best;
    // A new shard has nobody to send the backlog to: it starts at head.
    const shard: Shard = { index: this.shards.length, sent: this.head, json: 0, msgpack: 0 };
    this.shards.push(shard);
    return shard;
  }

  /** One turn: shards behind head, round robin, until the slice's sockets are spent; then yield. */
  private pump(): void {
    let sockets = 0;
    const count = this.shards.length;
    for (let i = 0; i < count && sockets < this.limits.sliceSockets; i++) {
      const shard = this.shards[(this.nextShard + i) % count]!;
      if (shard.sent === this.head) continue;
      sockets += this.publish(shard);
      if (sockets >= this.limits.sliceSockets) this.nextShard = (this.nextShard + i + 1) % count;
    }
    this.trim();
    if (this.base !== this.head && !this.scheduled && !this.closed) {
      this.scheduled = setImmediate(() => {
        this.scheduled = null;
        if (!this.closed) this.pump();
      });
    }
  }

  /** Sends the shard every record it has not had, in order; returns the sockets written to. */
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
    return shard.json + shard.msgpack;
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
