import type pg from 'pg';
import { PG_DEADLOCK_DETECTED, PG_SERIALIZATION_FAILURE, pgCode } from '../errors/index.js';
import { beginChanges, endChanges } from './committed-changes.js';

/**
 * Runs fn in one transaction on one pooled client. Serialization failures and deadlocks are
 * retried (a bounded number of times) because the transaction is then rolled back whole and
 * is safe to run again; any other error rolls back and propagates.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  options: { retries?: number; isolation?: 'read committed' | 'repeatable read' | 'serializable' } = {},
): Promise<T> {
  const retries = options.retries ?? 3;
  for (let attempt = 0; ; attempt++) {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query(options.isolation ? `begin isolation level ${options.isolation}` : 'begin');
      beginChanges(client);
      const result = await fn(client);
      await client.query('commit');
      // Read caches learn of changed rows only once they are committed (committed-changes.ts).
      endChanges(pool, client, true);
      return result;
    } catch (error) {
      endChanges(pool, client, false);
      try {
        await client.query('rollback');
      } catch {
        broken = true; // the connection is unusable; drop it from the pool
      }
      const code = pgCode(error);
      if (attempt < retries && (code === PG_SERIALIZATION_FAILURE || code === PG_DEADLOCK_DETECTED)) continue;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
