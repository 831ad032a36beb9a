import { startTransactionCounter, type TransactionCounter } from '../../bench/pg-transaction-counter.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * A fresh test database reached through the bench's wire-protocol proxy in record mode: every
 * transaction a client of `proxiedUrl` runs is recorded with its statements and round trips
 * (counter.takeTransactions()). `stop` closes the proxy and drops the database.
 */
export interface CountedDatabase {
  db: TestDatabase;
  counter: TransactionCounter;
  proxiedUrl: string;
  stop(): Promise<void>;
}

export async function startCountedDatabase(label: string): Promise<CountedDatabase> {
  const db = await createTestDatabase(label);
  const target = new URL(db.url);
  const counter = await startTransactionCounter({ host: target.hostname, port: Number(target.port || 5432) }, { record: true });
  const proxied = new URL(db.url);
  proxied.host = `127.0.0.1:${counter.port}`;
  return {
    db,
    counter,
    proxiedUrl: proxied.toString(),
    stop: async () => {
      await counter.close();
      await db.drop();
    },
  };
}
