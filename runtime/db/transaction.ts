import type pg from 'pg';
import { PG_DEADLOCK_DETECTED, PG_SERIALIZATION_FAILURE, pgCode } from '../errors/index.js';
import { beginChanges, endChanges } from './committed-changes.js';
import { dropHeldStatements, holdForNextStatement, isCachedPlanChanged } from './pool.js';

// Round trips (see createPool: every pooled client runs in pg's pipeline mode). A statement is
// written to the socket when it is issued, not when the one before it has answered, and
// PostgreSQL runs a connection's statements strictly in the order they arrive. So statements
// that do not need each other's results are issued together (`Promise.all`, or a store
// function called without awaiting it) and cost one round trip between them, with the same
// order, locking and atomicity as issued one by one: inside a transaction a failed statement
// aborts it, every later statement fails with 25P02 and COMMIT answers ROLLBACK.

/**
 * A statement issued now and awaited later (after others were issued behind it): its rejection
 * is marked seen at once, so the process does not treat it as unhandled while the caller has not
 * reached its await yet; the caller still awaits it and sees the error there.
 */
export function inFlight<T>(statement: Promise<T>): Promise<T> {
  statement.catch(() => undefined);
  return statement;
}

const DEFERRED = Symbol('statements-deferred-to-commit');

interface Deferring {
  [DEFERRED]?: Promise<unknown>[];
}

/**
 * A statement whose result the transaction does not need (an idempotency record, an outbox row
 * written last): `issue` is called (it issues the statement on `tx`) right before the next
 * statement the transaction issues, in the same socket write — the COMMIT at the latest — so it
 * costs neither a round trip nor a write of its own (holdForNextStatement). PostgreSQL runs it
 * where it would have run had it been issued now: after everything issued before, before
 * everything issued after. Its failure rolls the transaction back and is what withTransaction
 * throws; a transaction that fails first never issues it. Only inside withTransaction.
 */
export function deferToCommit(tx: pg.PoolClient, issue: () => Promise<unknown>): void {
  const deferred = (tx as unknown as Deferring)[DEFERRED];
  if (!deferred) throw new Error('deferToCommit outside withTransaction');
  // Observed at once (an unobserved rejection would end the process); reported at the commit.
  const go = () => void deferred.push(inFlight(issue()));
  if (!holdForNextStatement(tx, go)) go();
}

/** Whether `db` is a client inside withTransaction (where deferToCommit may be used). */
export function isTransactionClient(db: unknown): db is pg.PoolClient {
  return typeof db === 'object' && db !== null && (db as Deferring)[DEFERRED] !== undefined;
}

/**
 * Runs fn in one transaction on one pooled client. Serialization failures and deadlocks are
 * retried (a bounded number of times) because the transaction is then rolled back whole and
 * is safe to run again; any other error rolls back and propagates.
 *
 * BEGIN travels with fn's first statements and COMMIT with its deferred ones (deferToCommit):
 * a transaction whose statements depend on each other costs one round trip per dependency
 * level, not one per statement. Every statement fn issues must be awaited by fn or deferred:
 * a COMMIT that answers ROLLBACK (a statement failed unseen) is an error, never a success.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  options: { retries?: number; isolation?: 'read committed' | 'repeatable read' | 'serializable' } = {},
): Promise<T> {
  const retries = options.retries ?? 3;
  for (let attempt = 0; ; attempt++) {
    const client = await pool.connect();
    const deferring = client as unknown as Deferring;
    let broken = false;
    try {
      // Not awaited here: it is on the wire ahead of fn's first statement, which PostgreSQL then
      // runs inside the transaction. A BEGIN that failed is thrown below, before any COMMIT.
      const begun = inFlight(client.query(options.isolation ? `begin isolation level ${options.isolation}` : 'begin'));
      beginChanges(client);
      deferring[DEFERRED] = [];
      const result = await fn(client);
      await begun;
      const deferred = deferring[DEFERRED];
      delete deferring[DEFERRED];
      // Issuing the COMMIT first issues the held deferred statements (pushed onto `deferred`).
      const committed = inFlight(client.query('commit'));
      // The deferred statements' own errors first: they are why a COMMIT would answer ROLLBACK.
      await Promise.all(deferred);
      const outcome = await committed;
      if (outcome.command !== 'COMMIT') throw new Error(`the transaction was rolled back at commit (${outcome.command})`);
      // Read caches learn of changed rows only once they are committed (committed-changes.ts).
      endChanges(pool, client, true);
      return result;
    } catch (error) {
      delete deferring[DEFERRED];
      dropHeldStatements(client);
      endChanges(pool, client, false);
      try {
        await client.query('rollback');
      } catch {
        broken = true; // the connection is unusable; drop it from the pool
      }
      // A statement this connection prepared before a schema change (createPool): the
      // connection is dropped with its prepared statements and the transaction, rolled back
      // whole, runs again on another.
      const stalePlan = isCachedPlanChanged(error);
      if (stalePlan) broken = true;
      const code = pgCode(error);
      if (attempt < retries && (code === PG_SERIALIZATION_FAILURE || code === PG_DEADLOCK_DETECTED || stalePlan)) continue;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
