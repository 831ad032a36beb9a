import type pg from 'pg';
import { isCachedPlanChanged } from '../db/index.js';
import { enqueueOnThread, enqueueOnThreads, type EnqueuedInput, type EnqueueKeyRefused, type EnqueueStatementInput } from './enqueue-input.js';

type Outcome = EnqueuedInput | EnqueueKeyRefused | null;

interface Pending {
  readonly input: EnqueueStatementInput;
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

/** At most this many inputs per statement (a tick's worth under load is far fewer). */
const MAX_BATCH = 32;

/**
 * The inbox POST statements of this process, several in ONE statement when they arrive together
 * (enqueueOnThreads): under load, the POSTs of one event-loop tick share a round trip, the
 * executor's start and a commit (one WAL flush) instead of each paying its own.
 *
 * When nothing is in flight an input leaves at once (at the end of the current microtask run,
 * with whatever was issued in it): a lone client's POST never waits for a batch. While a
 * statement is in flight, inputs queue until the tick's end (setImmediate) and leave together,
 * without waiting for the one in flight (each batch takes its own pool connection).
 *
 * Answers are exactly those of each input alone (enqueueOnThread): a batch either commits every
 * input it made or nothing, and when its statement fails for any reason (a twin's record
 * committed after its snapshot, a deadlock between two processes' batches, a plan gone stale, …)
 * each of its inputs is run again alone and answered from that — which raises, or falls back,
 * exactly as it did before there were batches.
 *
 * Two inputs for one thread never share a batch (the statement's UPDATE … FROM would apply only
 * one of them): the second waits for the next. In this process a thread's inputs are already
 * serialised by its actor; this only keeps the statement's precondition whatever the caller.
 */
export class EnqueueBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private dueNow = false;
  private dueAtTickEnd = false;
  /** Inputs answered, the statements that answered them, and batch statements that failed (their inputs then ran alone). */
  readonly counts = { inputs: 0, statements: 0, failed: 0 };

  constructor(private readonly pool: pg.Pool) {}

  enqueue(input: EnqueueStatementInput): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (this.dueNow) return;
      if (this.inFlight === 0 && !this.dueAtTickEnd) {
        this.dueNow = true;
        queueMicrotask(() => {
          this.dueNow = false;
          this.flush();
        });
        return;
      }
      if (this.dueAtTickEnd) return;
      this.dueAtTickEnd = true;
      setImmediate(() => {
        this.dueAtTickEnd = false;
        this.flush();
      });
    });
  }

  private flush(): void {
    let rest = this.queue;
    this.queue = [];
    while (rest.length > 0) {
      const batch: Pending[] = [];
      const threads = new Set<string>();
      const later: Pending[] = [];
      for (const pending of rest) {
        const { input } = pending;
        const fits = batch.length < MAX_BATCH && !threads.has(input.thread_id) && (batch.length === 0 || sameChannels(batch[0]!.input, input));
        if (!fits) later.push(pending);
        else {
          batch.push(pending);
          threads.add(input.thread_id);
        }
      }
      rest = later;
      // In thread order: the statement's UPDATE then locks the rows in that order (its nested
      // loop over the inputs), so two processes' batches over the same threads queue on their
      // first common row instead of deadlocking (PostgreSQL would break a deadlock, after
      // deadlock_timeout; the inputs would then run alone).
      batch.sort((a, b) => (a.input.thread_id < b.input.thread_id ? -1 : a.input.thread_id > b.input.thread_id ? 1 : 0));
      this.inFlight++;
      void (batch.length === 1 ? this.alone(batch[0]!) : this.together(batch)).finally(() => {
        this.inFlight--;
      });
    }
  }

  /** One input, its own statement: its answer or its error. */
  private async alone(pending: Pending): Promise<void> {
    this.counts.inputs++;
    this.counts.statements++;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      return pending.reject(error);
    }
    let broken = false;
    try {
      pending.resolve(await enqueueOnThread(client, pending.input));
    } catch (error) {
      // A statement prepared before a schema change: this connection goes with its plans.
      broken = isCachedPlanChanged(error);
      pending.reject(error);
    } finally {
      client.release(broken);
    }
  }

  /** Several inputs in one statement; if it fails, each alone. */
  private async together(batch: Pending[]): Promise<void> {
    let outcomes: Outcome[] | null = null;
    let client: pg.PoolClient | null = null;
    let broken = false;
    try {
      client = await this.pool.connect();
      outcomes = await enqueueOnThreads(client, batch.map((p) => p.input));
      this.counts.inputs += batch.length;
      this.counts.statements++;
    } catch (error) {
      broken = isCachedPlanChanged(error);
      outcomes = null;
      this.counts.failed++;
    } finally {
      client?.release(broken);
    }
    if (outcomes) {
      batch.forEach((pending, i) => pending.resolve(outcomes[i] ?? null));
      return;
    }
    // Nothing of the batch was written: each input as if it had come alone.
    await Promise.all(batch.map((pending) => this.alone(pending)));
  }
}

function sameChannels(a: EnqueueStatementInput, b: EnqueueStatementInput): boolean {
  return a.accepted_channel === b.accepted_channel && a.steer_channel === b.steer_channel;
}
