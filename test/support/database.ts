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
        // pg-pool's end() resolves once its clients are told to end, before their backends have
        // read the Terminate: forcing the drop at that moment terminates those sessions (57P01),
        // and the test's pool, still listening on them, raises it as an unhandled 'error' that
        // ends the test process (seen in CI: toast-compression after all its tests passed).
        // The sessions are given up to a second to end by themselves; force ends the rest.
        for (let waited = 0; waited < 1_000; waited += 25) {
          const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
          if (rows[0]!.n === 0) break;
          await new Promise((r) => setTimeout(r, 25));
        }
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
