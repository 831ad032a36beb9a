import pg from 'pg';
import type { Logger } from '../log/index.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

// timestamptz and bigint come back as strings: timestamps are passed through as ISO text by
// the row mappers (toIso), counts are cast to int in SQL where they are small.
export function createPool(options: {
  url: string;
  size: number;
  statementTimeoutMs: number;
  applicationName: string;
  logger: Logger;
  connectTimeoutMs?: number;
}): pg.Pool {
  const pool = new pg.Pool({
    // pg's pipeline mode: a statement is written when it is issued, not when the previous one
    // has answered, so statements issued together cost one round trip (runtime/db/transaction.ts
    // says how the hot transactions use it). A client awaited statement by statement behaves
    // exactly as without it. Not in the types of @types/pg yet.
    ...({ pipeline: true } as object),
    connectionString: options.url,
    max: options.size,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    ...(options.statementTimeoutMs > 0 ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  // Once end() was called the loss is expected, not news: end() resolves when it has asked
  // each idle connection to close, not when the sockets are closed, so stopping the embedded
  // server right after it can still cut them.
  const lost = (error: Error, message: string) => {
    if (pool.ending) options.logger.debug({ err: error.message }, 'database connection closed at shutdown');
    else options.logger.warn({ err: error.message }, message);
  };
  pool.on('error', (error) => lost(error, 'database connection lost'));
  // pg-pool listens for errors only while a client is idle: a checked-out client whose server
  // session ends between two statements (a restart sends 57P01 to every session) would emit an
  // unhandled 'error' and end the process. Every client keeps a listener for its whole life;
  // the failed client is then unusable, its next statement rejects (and the caller's error
  // handling runs), and releasing it drops it from the pool (pg-pool checks _queryable).
  pool.on('connect', (client) => {
    client.on('error', (error) => lost(error, 'database connection lost while in use'));
  });
  return pool;
}

export function toIso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}
