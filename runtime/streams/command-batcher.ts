import type { ChainableCommander, Redis } from 'ioredis';

type Replies = Array<[Error | null, unknown]>;

interface Queued {
  build(pipeline: ChainableCommander): void;
  count: number;
  resolve(replies: Replies): void;
}

/**
 * Batches the stream writes of every run this process hosts into one Redis pipeline per round
 * trip. While no pipeline is in flight, a command goes out at once (at the end of the current
 * microtask run, so commands issued together share it): a run's first event never waits behind
 * a batch. While one is in flight, everything that arrives meanwhile — the XADDs of all runs in
 * that tick, their tail snapshots — queues and leaves as ONE pipeline when it answers. Under load
 * this is one write and one read per round trip for the whole process instead of one per run.
 *
 * Order: commands leave in the order they were queued, on one connection, so Redis applies
 * them in that order (a run's XADDs stay in order; a tail snapshot is never overtaken by an
 * older one, nor a clear by the snapshot before it).
 */
export class CommandBatcher {
  private queue: Queued[] = [];
  private inFlight = false;
  private scheduled = false;

  constructor(private readonly redis: Redis) {}

  /** Queues `count` commands added by `build`; resolves with their replies (errors per command). */
  run(build: (pipeline: ChainableCommander) => void, count: number): Promise<Replies> {
    return new Promise((resolve) => {
      this.queue.push({ build, count, resolve });
      if (this.inFlight || this.scheduled) return;
      this.scheduled = true;
      queueMicrotask(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.inFlight = true;
    const pipeline = this.redis.pipeline();
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
        this.inFlight = false;
        // What queued while this pipeline was out (continuations of its replies included).
        if (this.queue.length > 0) this.flush();
      });
  }
}
