import type pg from 'pg';
import { isCachedPlanChanged } from '../db/index.js';
import { enqueueOnThread, enqueueOnThreads, type EnqueuedInput, type EnqueueKeyRefused, type EnqueueStatementInput } from './enqueue-input.js';
import { StatementBatcher } from './statement-batcher.js';

type Outcome = EnqueuedInput | EnqueueKeyRefused | null;

/**
 * The inbox POST statements of this process, several in ONE statement when they arrive together
 * (enqueueOnThreads; StatementBatcher says when): under load, the POSTs of one event-loop tick
 * share a round trip, the executor's start and a commit (one WAL flush) instead of each paying
 * its own. A shared statement PostgreSQL refused answers each input from its own statement
 * (enqueueOnThread), so every answer — a 201, a key's refusal, a 404, an error the caller falls
 * back on — is the one it had alone. One input per thread per statement (keyOf): in this process
 * a thread's inputs are already serialised by its actor; this keeps the statement's precondition
 * (UPDATE … FROM would apply only one of two rows matching one thread) whatever the caller.
 */
export class EnqueueBatcher extends StatementBatcher<EnqueueStatementInput, Outcome> {
  constructor(private readonly pool: pg.Pool) {
    super();
  }

  /** Queues the input's statement (alone or with others); its answer, or its own statement's error. */
  enqueue(input: EnqueueStatementInput): Promise<Outcome> {
    return this.run(input);
  }

  protected keyOf(input: EnqueueStatementInput): string {
    return input.thread_id;
  }

  protected override compatible(first: EnqueueStatementInput, input: EnqueueStatementInput): boolean {
    return first.accepted_channel === input.accepted_channel && first.steer_channel === input.steer_channel;
  }

  protected alone(input: EnqueueStatementInput): Promise<Outcome> {
    return this.onConnection((client) => afterWrite(enqueueOnThread(client, input), [input]));
  }

  protected together(inputs: EnqueueStatementInput[]): Promise<Outcome[]> {
    return this.onConnection((client) => afterWrite(enqueueOnThreads(client, inputs), inputs));
  }

  private async onConnection<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      return await work(client);
    } catch (error) {
      // A statement prepared before a schema change: this connection goes with its plans.
      broken = isCachedPlanChanged(error);
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

/**
 * Calls the inputs' `sent` right after their statement's write: the statement was issued when
 * `answer` was made (its query call runs before the first await), and the connection's cork
 * releases it in a microtask queued then (runtime/db/pool.ts), so a microtask queued now runs
 * after the write, in the same turn of the loop.
 */
function afterWrite<T>(answer: Promise<T>, inputs: readonly EnqueueStatementInput[]): Promise<T> {
  if (inputs.some((input) => input.sent)) queueMicrotask(() => inputs.forEach((input) => input.sent?.()));
  return answer;
}
