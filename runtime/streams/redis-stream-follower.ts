import type { Redis } from 'ioredis';
import type { Kv } from '../kv/index.js';
import type { OnStreamRecords, StreamFollower } from './stream-bus.js';
import type { StreamEvent, StreamRecord } from './stream-event.js';
import { compareStreamIds } from './stream-ids.js';

/** Longest wait of one XREAD: bounds how late a thread followed mid-read is picked up if the
 *  wake-up (CLIENT UNBLOCK) misses the read. */
const BLOCK_MS = 2000;
const READ_COUNT = 500;
const RETRY_MS = 250;
const UNBLOCK_TRIES = 20;

interface Follow {
  cursor: string;
  /** Changes on every follow(): a reply to a read issued before it belongs to an older follow. */
  token: number;
}

type XReadReply = Array<[string, Array<[string, string[]]>]> | null;

/**
 * The fan-out's reader for every followed thread of this process: ONE blocking XREAD over all
 * of their streams on a dedicated connection (blocking reads must not hold up the command
 * connection), so N subscribers of a thread — and M threads — cost one read per batch of
 * records. Following a new thread wakes a blocked read with CLIENT UNBLOCK so it is included
 * at once.
 * Order and exactly-once: reads run one at a time; each thread's cursor advances only through
 * the reply to a read that used it, or through a local offer (offer) whose records follow the
 * cursor without a gap; a reply is delivered only to the follow it was issued for (token), and
 * only its records past the cursor, so records reach onRecords in stream order, once.
 */
export class RedisStreamFollower implements StreamFollower {
  private readonly followed = new Map<string, Follow>();
  private connection: Redis | null = null;
  private clientId: number | null = null;
  private readSeq = 0;
  private reading = false;
  private running = false;
  private tokens = 0;
  private closed = false;

  constructor(
    private readonly kv: Kv,
    private readonly keyOf: (threadId: string) => string,
    private readonly onRecords: OnStreamRecords,
    private readonly onError: (error: unknown) => void,
    private readonly onClose: () => void = () => undefined,
  ) {}

  follow(threadId: string, afterId: string): void {
    if (this.closed) return;
    this.followed.set(threadId, { cursor: afterId, token: ++this.tokens });
    if (!this.running) void this.loop();
    else this.wake(this.readSeq, UNBLOCK_TRIES);
  }

  /** Whether the thread is followed (its publishes are worth offering, see offer). */
  isFollowing(threadId: string): boolean {
    return this.followed.has(threadId);
  }

  /**
   * Records this process has just written to the thread's stream, offered before any read
   * returns them: `previousId` is the id of the record that preceded the first of them in the
   * stream (read in the same atomic step as their XADDs, RedisStreamBus.publish). Taken only
   * when it is exactly this follow's cursor — nothing lies between what was delivered and
   * these records (no other writer's record is skipped) — and then delivered at once and the
   * cursor moved past them; a read in flight returns them again and deliver() drops them (ids
   * at or before the cursor). Otherwise (another writer's records come first, or the follow
   * is not at the stream's end yet) the offer is ignored and the reads deliver everything, in
   * order, as ever. The in-flight read's follow is the same (token unchanged): the offer does
   * not start a new follow.
   */
  offer(threadId: string, previousId: string, records: StreamRecord[]): void {
    const current = this.followed.get(threadId);
    const last = records[records.length - 1];
    if (!current || !last || compareStreamIds(current.cursor, previousId) !== 0) return;
    current.cursor = last.id;
    try {
      this.onRecords(threadId, records);
    } catch (error) {
      this.onError(error);
    }
  }

  unfollow(threadId: string): void {
    // A blocked read that includes it returns in time; its reply is then dropped (no follow).
    this.followed.delete(threadId);
  }

  unfollowAll(): void {
    this.followed.clear();
  }

  close(): void {
    this.closed = true;
    this.onClose();
    this.followed.clear();
    this.connection?.disconnect(false);
    this.connection = null;
  }

  private connect(): Redis | null {
    if (this.connection) return this.connection;
    const connection = this.kv.duplicate();
    if (!connection) return null;
    // The id changes with every reconnection; CLIENT UNBLOCK needs the current one.
    const learnId = (): void => void connection.client('ID').then((id) => (this.clientId = Number(id)), () => (this.clientId = null));
    connection.on('ready', learnId);
    if (connection.status === 'ready') learnId();
    this.connection = connection;
    return connection;
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed && this.followed.size > 0) {
        const connection = this.connect();
        if (!connection) return;
        const batch = [...this.followed].map(([threadId, follow]) => ({ threadId, key: this.keyOf(threadId), ...follow }));
        let reply: XReadReply;
        this.reading = true;
        this.readSeq++;
        try {
          const args = [...batch.map((b) => b.key), ...batch.map((b) => b.cursor)];
          reply = (await connection.xread('COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', ...args)) as XReadReply;
        } catch (error) {
          if (this.closed) return;
          this.onError(error);
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          continue;
        } finally {
          this.reading = false;
        }
        this.deliver(batch, reply);
      }
    } finally {
      this.running = false;
    }
  }

  private deliver(batch: Array<{ threadId: string; key: string; token: number }>, reply: XReadReply): void {
    for (const [key, entries] of reply ?? []) {
      const issued = batch.find((b) => b.key === key);
      const current = issued && this.followed.get(issued.threadId);
      if (!issued || !current || current.token !== issued.token) continue;
      const records: StreamRecord[] = [];
      for (const [id, fields] of entries) {
        if (compareStreamIds(id, current.cursor) <= 0) continue;
        const json = fields[1] ?? 'null';
        records.push({ id, event: JSON.parse(json) as StreamEvent, json });
      }
      const last = records[records.length - 1];
      if (!last) continue;
      current.cursor = last.id;
      try {
        this.onRecords(issued.threadId, records);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** Interrupts the blocked read `seq` so the next one includes a newly followed thread. */
  private wake(seq: number, tries: number): void {
    const redis = this.kv.redis;
    if (!this.reading || seq !== this.readSeq || this.clientId === null || !redis || tries <= 0) return;
    redis.client('UNBLOCK', this.clientId).then(
      // 0: the read was not blocked yet (still on its way to the server): try again shortly.
      (unblocked) => {
        if (Number(unblocked) === 0) setTimeout(() => this.wake(seq, tries - 1), 2);
      },
      () => undefined,
    );
  }
}
