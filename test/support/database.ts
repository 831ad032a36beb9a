import { randomBytes } from 'node:crypto';
import pg from 'pg';

// The machine's PostgreSQL (trust auth). Each test file gets a fresh database and drops it.
export const ADMIN_URL = process.env.SVC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export function urlFor(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function createTestDatabase(label = 't'): Promise<TestDatabase> {
  const name = `svc_${label.replace(/[^a-z0-9]/g, '_')}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: urlFor(name),
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs one query against a database with a short-lived client. */
export async function query<T extends pg.QueryResultRow = Record<string, unknown>>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}
