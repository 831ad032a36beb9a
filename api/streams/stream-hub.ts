import type { Logger, StreamBus, StreamFollower, StreamRecord, Uws } from '../../runtime/index.js';
import { compareStreamIds } from '../../runtime/index.js';
import { EncodedRecord } from './stream-frames.js';
import type { StreamMetrics } from './stream-metrics.js';
import type { FinishReason, StreamSubscriber } from './stream-subscriber.js';
import { ThreadChannel } from './thread-channel.js';

const REPLAY_PAGE = 500;
/** A replay pauses while the subscriber's backlog is above this, so resuming from far back
 *  is paced by the client's reading instead of tripping its backlog bound. */
const REPLAY_HIGH_WATER = 256 * 1024;
/** A replay paused this long for a client that does not read ends it (backpressure). */
const REPLAY_DRAIN_TIMEOUT_MS = 30_000;
const HEARTBEAT_MS = 15_000;

/**
 * Fans a thread's stream out to this process's subscribers: ONE follower read per thread
 * (shared by all threads, see the bus's follower), then one uWS publish per record, frame
 * format and shard of WebSocket subscribers and one write per SSE subscriber (ShardedFanOut:
 * a large thread's subscribers are written a slice per turn of the loop), so N subscribers of
 * a thread cost one Redis read.
 *
 * Resume invariant (exactly once, in order): a subscriber that resumes after id `a` is sent the
 * records in (a, cursor] directly from the stream (XRANGE pages), and is attached to the live
 * fan-out in the same synchronous step in which its last sent id equals the channel's cursor.
 * The fan-out delivers a record (hands it to the channel's ShardedFanOut, whose join places a
 * subscriber past every record handed to it so far) and then advances the cursor, also
 * synchronously; so every record after `a` reaches it exactly once — by replay if
 * it is at or before the cursor at attach time, live if after — and in stream order.
 */
export class StreamHub {
  private readonly channels = new Map<string, ThreadChannel>();
  private readonly follower: StreamFollower;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly subscribers = new Set<StreamSubscriber>();
  private readonly announced = new WeakSet<StreamSubscriber>();

  constructor(
    private readonly app: Uws.TemplatedApp,
    private readonly bus: StreamBus,
    private readonly logger: Logger,
    private readonly metrics: StreamMetrics,
  ) {
    this.follower = bus.follower(
      (threadId, records) => this.fanOut(threadId, records),
      (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'stream follower read failed; retrying'),
    );
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS).unref();
    metrics.observe(() => this.subscribers);
  }

  /**
   * Subscribes after the id `after`. Never rejects: failures finish the subscriber.
   * `streamEnd`: the stream's last id as the caller just read it (admission, for a subscription
   * without a resume point: `after` is then that id), used instead of reading it again when
   * this subscription opens the thread's channel.
   */
  async join(threadId: string, subscriber: StreamSubscriber, after: string, streamEnd?: string): Promise<void> {
    const channel = this.channelOf(threadId);
    channel.members.add(subscriber);
    this.subscribers.add(subscriber);
    try {
      await (channel.ready ??= this.open(channel, streamEnd));
      await this.catchUp(channel, subscriber, after, false);
    } catch (error) {
      this.logger.warn({ thread_id: threadId, err: error instanceof Error ? error.message : String(error) }, 'stream subscription failed');
      if (!subscriber.closed) subscriber.finish('internal');
    }
  }

  /** Forgets a subscriber whose connection ended; the last one of a thread stops its reads. */
  leave(subscriber: StreamSubscriber, threadId: string): void {
    this.subscribers.delete(subscriber);
    const channel = this.channels.get(threadId);
    if (!channel || !channel.members.delete(subscriber)) return;
    subscriber.detach(channel);
    channel.waiting = channel.waiting.filter((w) => w.subscriber !== subscriber);
    if (channel.members.size > 0) return;
    channel.fanOut.close();
    this.channels.delete(threadId);
    this.follower.unfollow(threadId);
  }

  /** Ends every subscription (store lost, shutdown): cursors are void, channels start afresh. */
  finishAll(reason: FinishReason): void {
    this.follower.unfollowAll();
    const all = [...this.subscribers];
    for (const channel of this.channels.values()) channel.fanOut.close();
    this.channels.clear();
    this.subscribers.clear();
    for (const subscriber of all) if (!subscriber.closed) subscriber.finish(reason);
  }

  close(): void {
    clearInterval(this.heartbeat);
    this.finishAll('shutdown');
    this.follower.close();
  }

  private channelOf(threadId: string): ThreadChannel {
    let channel = this.channels.get(threadId);
    if (!channel) this.channels.set(threadId, (channel = new ThreadChannel(threadId, this.app)));
    return channel;
  }

  /**
   * Starts the channel at the stream's end (`streamEnd` when the caller has just read it, else
   * read now); earlier records are each subscriber's replay. A cursor older than the stream's
   * true end loses nothing: the follower delivers every record after the cursor.
   */
  private async open(channel: ThreadChannel, streamEnd?: string): Promise<void> {
    let last: string | null;
    try {
      last = streamEnd ?? (await this.bus.lastId(channel.threadId));
    } catch (error) {
      channel.ready = null; // the next subscriber tries again
      throw error;
    }
    if (this.channels.get(channel.threadId) !== channel) return;
    if (last !== null) channel.cursor = last;
    this.follower.follow(channel.threadId, channel.cursor);
  }

  /**
   * Replays (after, cursor] to the subscriber, then attaches it (see the class invariant).
   * `checked`: the stream has been read once, so a trimmed resume point was already detected.
   */
  private async catchUp(channel: ThreadChannel, subscriber: StreamSubscriber, after: string, checked: boolean): Promise<void> {
    let position = after;
    for (;;) {
      if (subscriber.closed || !channel.members.has(subscriber)) return;
      const order = compareStreamIds(position, channel.cursor);
      // At the cursor: nothing lies between the resume point and what the fan-out delivers
      // next, so there is nothing to replay and nothing that could have been trimmed — no read
      // (a subscription without a resume point, which starts at the stream's end, never reads).
      if (order === 0) return this.attach(channel, subscriber, position);
      if (checked && order > 0) {
        // Ahead of this process's reader (its id came from a faster path, or from before the
        // store lost its data): nothing to replay yet; it catches up once the cursor passes it.
        this.announce(subscriber, position);
        return void channel.waiting.push({ subscriber, after: position });
      }
      // The cursor as the read is sent: every record up to it is in the stream by then, so a
      // page with none of them after `position` means they were trimmed. The cursor may move
      // on while the read is out (the fan-out keeps going): records it passes meanwhile can be
      // missing from this page without any trimming — read again for them.
      const readFrom = channel.cursor;
      const page = await this.bus.read(channel.threadId, position, REPLAY_PAGE);
      checked = true;
      if (subscriber.closed || !channel.members.has(subscriber)) return;
      if (page.trimmed) return subscriber.finish('trimmed');
      // Only records the fan-out has already passed are sent here; later ones come live.
      const cursor = channel.cursor;
      let progressed = false;
      for (const record of page.records) {
        if (compareStreamIds(record.id, cursor) > 0) break;
        if (subscriber.bufferedBytes() > REPLAY_HIGH_WATER && !(await this.drained(subscriber))) return subscriber.finish('backpressure');
        if (subscriber.closed) return;
        subscriber.sendRecord(new EncodedRecord(record));
        position = record.id;
        progressed = true;
      }
      // Behind the cursor the read was sent at, with nothing to replay: records the fan-out
      // had seen are gone. (Behind only a cursor that moved during the read: the loop reads
      // again, now from a cursor that is in the stream.)
      if (!progressed && compareStreamIds(position, readFrom) < 0) return subscriber.finish('trimmed');
    }
  }

  /** Waits for the subscriber to read its backlog down; false if it did not in time. */
  private async drained(subscriber: StreamSubscriber): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, REPLAY_DRAIN_TIMEOUT_MS)));
    await Promise.race([subscriber.whenDrained(), timeout]);
    clearTimeout(timer);
    return subscriber.closed || subscriber.bufferedBytes() <= REPLAY_HIGH_WATER;
  }

  private attach(channel: ThreadChannel, subscriber: StreamSubscriber, position: string): void {
    this.announce(subscriber, position);
    if (!subscriber.closed) subscriber.attach(channel);
  }

  /** `stream.live`, once per subscriber: everything after `position` now arrives as it happens. */
  private announce(subscriber: StreamSubscriber, position: string): void {
    if (this.announced.has(subscriber)) return;
    this.announced.add(subscriber);
    subscriber.sendControl({ type: 'stream.live', after: position });
  }

  /** Delivers records to every attached subscriber (shards beyond this turn's slice on later turns), then advances the cursor (synchronously). */
  private fanOut(threadId: string, records: StreamRecord[]): void {
    const channel = this.channels.get(threadId);
    if (!channel) return;
    const fresh = records.filter((r) => compareStreamIds(r.id, channel.cursor) > 0).map((r) => new EncodedRecord(r));
    const last = fresh[fresh.length - 1];
    if (!last) return;
    channel.fanOut.enqueue(fresh);
    channel.cursor = last.id;
    this.metrics.events.inc(fresh.length);
    this.promote(channel);
  }

  /** Waiting subscribers whose resume point the cursor has reached catch up (and attach). */
  private promote(channel: ThreadChannel): void {
    if (channel.waiting.length === 0) return;
    const due = channel.waiting.filter((w) => compareStreamIds(w.after, channel.cursor) <= 0);
    if (due.length === 0) return;
    channel.waiting = channel.waiting.filter((w) => !due.includes(w));
    for (const { subscriber, after } of due) {
      void this.catchUp(channel, subscriber, after, false).catch((error: unknown) => {
        this.logger.warn({ thread_id: channel.threadId, err: error instanceof Error ? error.message : String(error) }, 'stream catch-up failed');
        if (!subscriber.closed) subscriber.finish('internal');
      });
    }
  }

  /** SSE comments keep proxies from timing idle streams out (WebSocket pings are automatic). */
  private beat(): void {
    for (const subscriber of this.subscribers) if (!subscriber.closed) subscriber.heartbeat();
  }
}
