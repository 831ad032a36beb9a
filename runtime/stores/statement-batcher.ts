import { TickFlush } from '../tick/index.js';
/**
 * Several callers' statements of one kind as ONE statement when they arrive together: the shape
 * shared by the inbox POST's (EnqueueBatcher) and the seal's (SealBatcher).
 *
 * When nothing is in flight an item leaves at once (at the end of the current microtask run,
 * with whatever was issued in it): a lone caller never waits for a batch. While a statement is in
 * flight, items queue until the tick's end and leave together (TickFlush, the command batcher's
 * rule), without waiting for the one in flight (each statement takes its own pool connection).
 *
 * Answers are exactly those of each item alone: a batch's statement either commits every item it
 * made or nothing, and when PostgreSQL answers it with an error (any SQLSTATE: the statement, its
 * own transaction, was rolled back) each of its items is run again alone (`alone`) and answered
 * from that — which raises, or declines, exactly as it did without batches. An error that is not
 * PostgreSQL's answer (the connection lost, a client-side timeout) leaves the outcome unknown —
 * the commit may have happened — so it is not retried: every item of the batch is rejected with
 * it, as its own statement's caller would have been.
 *
 * Two items with the same conflict key (`keyOf`: the thread they write) never share a batch: the
 * second waits for the next. A batch is sent in key order (`keyOf`): its statement locks the rows
 * in that order, so two processes' batches over the same rows queue on their first common row
 * instead of deadlocking (PostgreSQL would break a deadlock after deadlock_timeout, and the items
 * would then run alone).
 */
export abstract class StatementBatcher<Item, Outcome> {
  private queue: Array<{ item: Item; resolve(outcome: Outcome): void; reject(error: unknown): void }> = [];
  private inFlight = 0;
  private readonly flushes = new TickFlush(() => this.flush());
  /** Items answered, the statements that answered them, and batch statements that failed (their items then ran alone). */
  readonly counts = { inputs: 0, statements: 0, failed: 0 };

  /** What `counts` counts, as it happens (the process's metrics). */
  observe: ((counted: 'inputs' | 'statements' | 'failed', n: number) => void) | undefined;

  constructor(private readonly maxBatch = 32) {}

  private count(counted: 'inputs' | 'statements' | 'failed', n: number): void {
    this.counts[counted] += n;
    this.observe?.(counted, n);
  }

  /** The rows an item writes that no other item of its batch may (the thread). */
  protected abstract keyOf(item: Item): string;
  /** Whether `item` may share a statement with `first` (the batch's first item). */
  protected compatible(_first: Item, _item: Item): boolean {
    return true;
  }
  /** One item, its own statement. */
  protected abstract alone(item: Item): Promise<Outcome>;
  /** Several items in one statement, an outcome per item in their order; throws if the statement failed (nothing written). */
  protected abstract together(items: Item[]): Promise<Outcome[]>;

  run(item: Item): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.flushes.schedule(this.inFlight);
    });
  }

  private flush(): void {
    let rest = this.queue;
    this.queue = [];
    while (rest.length > 0) {
      const batch: typeof rest = [];
      const keys = new Set<string>();
      const later: typeof rest = [];
      for (const pending of rest) {
        const key = this.keyOf(pending.item);
        const fits = batch.length < this.maxBatch && !keys.has(key) && (batch.length === 0 || this.compatible(batch[0]!.item, pending.item));
        if (!fits) later.push(pending);
        else {
          batch.push(pending);
          keys.add(key);
        }
      }
      rest = later;
      batch.sort((a, b) => {
        const [x, y] = [this.keyOf(a.item), this.keyOf(b.item)];
        return x < y ? -1 : x > y ? 1 : 0;
      });
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
      });
    }
  }

  private async send(batch: Array<{ item: Item; resolve(outcome: Outcome): void; reject(error: unknown): void }>): Promise<void> {
    if (batch.length > 1) {
      let unknown: { error: unknown } | null = null;
      const outcomes = await this.together(batch.map((p) => p.item)).then(
        (answered) => answered,
        (error: unknown) => {
          if (!rolledBack(error)) unknown = { error };
          return null;
        },
      );
      if (unknown) {
        const { error } = unknown;
        this.count('failed', 1);
        for (const pending of batch) pending.reject(error);
        return;
      }
      if (outcomes) {
        this.count('inputs', batch.length);
        this.count('statements', 1);
        batch.forEach((pending, i) => pending.resolve(outcomes[i]!));
        return;
      }
      // Nothing of the batch was written: each item as if it had come alone.
      this.count('failed', 1);
    }
    await Promise.all(
      batch.map(async (pending) => {
        this.count('inputs', 1);
        this.count('statements', 1);
        try {
          pending.resolve(await this.alone(pending.item));
        } catch (error) {
          pending.reject(error);
        }
      }),
    );
  }
}

/**
 * Whether `error` is PostgreSQL's answer to the statement (a DatabaseError: a severity and a
 * five-character SQLSTATE), so that the statement — its own implicit transaction — was rolled
 * back. A Node error (ECONNRESET, a timeout, "Connection terminated") carries no such answer.
 */
export function rolledBack(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string';
}
