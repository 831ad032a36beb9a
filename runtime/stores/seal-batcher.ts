import type { Queryable } from '../db/index.js';
import { sealInOneStatement, sealManyInOneStatement, type OneStatementOutcome, type OneStatementSeal } from './seal-one.js';
import { StatementBatcher } from './statement-batcher.js';

/**
 * The common seals of this process (sealInOneStatement), several in ONE statement when they
 * arrive together (sealManyInOneStatement; StatementBatcher says when): under load, the runs
 * that end in one event-loop tick share a round trip, the executor's start and a commit. A shared
 * statement PostgreSQL refused — its guard (a thread that moved), a deadlock, any error — answers each seal
 * from its own statement, so every outcome (sealed, fenced out, declined) is the one it had alone.
 * Seals share a statement only with the same seal hooks' condition (`concernedSql`). One seal per
 * thread per statement (keyOf).
 */
export class SealBatcher extends StatementBatcher<OneStatementSeal, OneStatementOutcome> {
  /**
   * `maxBatch` 1: every seal alone — for a process whose background work is bounded
   * (database.background_connections: roles all and control), where seals queueing one by one
   * for the bound is what keeps the cores for requests (batched, the 32-client first delta went
   * from ~20 to ~53 ms: bench/RESULTS.md sessions 18 and 21).
   */
  constructor(
    private readonly db: Queryable,
    maxBatch = 32,
  ) {
    super(maxBatch);
  }

  seal(seal: OneStatementSeal): Promise<OneStatementOutcome> {
    return this.run(seal);
  }

  protected keyOf(seal: OneStatementSeal): string {
    return seal.run.thread_id;
  }

  protected override compatible(first: OneStatementSeal, seal: OneStatementSeal): boolean {
    return first.concernedSql === seal.concernedSql;
  }

  protected alone(seal: OneStatementSeal): Promise<OneStatementOutcome> {
    return sealInOneStatement(this.db, seal);
  }

  protected together(seals: OneStatementSeal[]): Promise<OneStatementOutcome[]> {
    return sealManyInOneStatement(this.db, seals);
  }
}
