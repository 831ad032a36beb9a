import type { ChainableCommander, Redis } from 'ioredis';
import { TickFlush } from '../tick/index.js';

type Replies = Array<[Error | null, unknown]>;

interface Queued {
  build(pipeline: ChainableCommander): void;
  count: number;
  /** Stream records (XADDs) among the commands. */
  records: number;
  resolve(replies: Replies): void;
}

/**
 * Batches the stream writes of every run this process hosts into one Redis pipeline per
 * event-loop tick. While no pipeline is in flight, a command goes out at once (at the end of the
 * current microtask run, so commands issued together share it): a run's first event never
 * waits behind a batch. While one is in flight, everything queued in this tick — the XADDs of
 * all runs, their tail snapshots — leaves as ONE pipeline at the tick's end (setImmediate),
 * without waiting for the one in flight (waiting for its reply was measured: under CPU
 * contention it added a round trip to every publish and cost a quarter of the runs/s with 32
 * concurrent clients). Under load this is one write per tick for the whole process instead of
 * one per run and publish.
 *
 * Order: commands leave in the order they were queued, on one connection, so Redis applies
 * them in that order (a run's XADDs stay in order; a tail snapshot is never overtaken by an
 * older one, nor a clear by the snapshot before it).
 *
 * Visibility: a batch with more than one stream record is sent as MULTI … EXEC. Redis serves a
 * blocked XREAD as soon as ONE command has made its key ready, so after a plain pipeline of n
 * XADDs the followers (every process's fan-out reader, redis-stream-follower.ts) read the first
 * record alone and need another read for the rest: two fan-out bursts (for a WebSocket topic,
 * one write per subscriber each) where one carries them all. Inside MULTI the blocked reads are
 * served after EXEC, with every record of the batch (checked against the machine's Redis in
 * command-batcher.test.ts). A command's runtime error (WRONGTYPE…) still fails only that command.
 *
 * Urgent commands (`urgent`: a run's first event and its first delta, what a client waits for
 * first) are never held to the tick's end: they leave at the end of the current microtask run
 * even while a pipeline is in flight, with everything queued before them (order is kept: a
 * flush always takes the whole queue). Measured under 32 concurrent clients, the first delta's
 * XADD was answered ~6.5 ms after the tail sent it, ~4.6 ms once urgent (bench/RESULTS.md,
 * session 16).
 */
export class CommandBatcher {
  private queue: Queued[] = [];
  private inFlight = 0;
  private readonly flushes = new TickFlush(() => this.flush());

  constructor(private readonly redis: Redis) {}

  /**
   * Queues `count` commands added by `build`; resolves with their replies (errors per command).
   * `urgent`: they leave now, not at the tick's end, even while a pipeline is in flight.
   */
  run(build: (pipeline: ChainableCommander) => void, count: number, records = 0, urgent = false): Promise<Replies> {
    return new Promise((resolve) => {
      this.queue.push({ build, count, records, resolve });
      this.flushes.schedule(this.inFlight, urgent);
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.inFlight++;
    let records = 0;
    for (const queued of batch) records += queued.records;
    const pipeline = records > 1 ? this.redis.multi() : this.redis.pipeline();
    for (const queued of batch) queued.build(pipeline);
    pipeline
      .exec()
      .then(
        (replies) => {
          let at = 0;
          for (const queued of batch) {
            queued.resolve(Array.from({ length: queued.count }, (_, i) => replies?.[at + i] ?? [new Error('no reply'), null]));
            at += queued.count;
          }
        },
        (error: unknown) => {
          const failed = error instanceof Error ? error : new Error(String(error));
          for (const queued of batch) queued.resolve(Array.from({ length: queued.count }, () => [failed, null]));
        },
      )
      .finally(() => {
        this.inFlight--;
      });
  }
}
