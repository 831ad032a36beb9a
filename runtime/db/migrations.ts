import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { PG_UNIQUE_VIOLATION, pgCode } from '../errors/index.js';

export interface Migration {
  version: number;
  name: string;
  checksum: string;
  sql: string;
}

export interface SchemaState {
  /** Versions applied in the database, ascending. Empty when nothing was ever applied. */
  applied: Array<{ version: number; name: string; checksum: string }>;
}

/** The folder of the build's migrations (the package's migrations/, next to dist/). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
const MIGRATIONS_TABLE = 'svc_schema_migrations';
// One fixed key: every migrating process of a deployment contends for the same lock.
const MIGRATION_LOCK_KEY = 7_311_004_212;

/** Forward-only numbered migrations; numbering must be gap-free from 1. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((file) => {
      const match = FILE.exec(file);
      if (!match) throw new Error(`migration file ${file} does not match NNNN_name.sql`);
      const sql = readFileSync(`${dir}/${file}`, 'utf8');
      return { version: Number(match[1]), name: match[2]!, checksum: createHash('sha256').update(sql).digest('hex'), sql };
    });
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations must be numbered 1..N without gaps; found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}

export async function readSchemaState(db: Pick<pg.Pool, 'query'>): Promise<SchemaState> {
  const exists = await db.query<{ present: boolean }>(`select to_regclass($1) is not null as present`, [MIGRATIONS_TABLE]);
  if (!exists.rows[0]?.present) return { applied: [] };
  const rows = await db.query<{ version: number; name: string; checksum: string }>(
    `select version, name, checksum from ${MIGRATIONS_TABLE} order by version`,
  );
  return { applied: rows.rows };
}

export type SchemaComparison =
  | { status: 'current'; version: number }
  | { status: 'behind'; database: number; build: number }
  | { status: 'ahead'; database: number; build: number }
  | { status: 'diverged'; version: number; reason: string };

/** Compares the database's applied migrations with the build's, exactly (versions and checksums). */
export function compareSchema(state: SchemaState, migrations: Migration[]): SchemaComparison {
  const build = migrations.length;
  const database = state.applied.length === 0 ? 0 : state.applied[state.applied.length - 1]!.version;
  for (const row of state.applied) {
    const mine = migrations[row.version - 1];
    if (!mine) continue;
    if (mine.checksum !== row.checksum || mine.name !== row.name) {
      return { status: 'diverged', version: row.version, reason: `migration ${row.version} (${row.name}) differs from this build's ${mine.name}` };
    }
  }
  if (database > build) return { status: 'ahead', database, build };
  if (database < build || state.applied.length !== database) return { status: 'behind', database, build };
  return { status: 'current', version: build };
}

export function describeMismatch(result: Exclude<SchemaComparison, { status: 'current' }>): string {
  switch (result.status) {
    case 'behind':
      return `database schema is at version ${result.database} but this build expects version ${result.build}: run \`svc-service migrate\``;
    case 'ahead':
      return `database schema is at version ${result.database}, newer than this build's version ${result.build}: upgrade svc-service (do not run an older build against a newer schema)`;
    case 'diverged':
      return `database schema does not match this build: ${result.reason}; run the build that applied it, or restore the database`;
    default: {
      const never: never = result;
      return never;
    }
  }
}

async function acquireLock(client: pg.PoolClient, timeoutSeconds: number): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [MIGRATION_LOCK_KEY]);
    if (rows[0]?.ok) return;
    if (Date.now() >= deadline) {
      throw new Error(`could not take the migration lock within ${timeoutSeconds} s (database.migration_advisory_lock_timeout): another process is migrating`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Applies pending migrations under a session advisory lock. Each migration runs in one
 * transaction that first records itself: a second migrator that somehow got past the lock
 * hits the primary key of the record and rolls back instead of applying twice.
 */
export async function migrate(
  pool: pg.Pool,
  options: { lockTimeoutSeconds: number; migrations?: Migration[]; onApplied?: (m: Migration) => void },
): Promise<{ applied: number[]; version: number }> {
  const migrations = options.migrations ?? loadMigrations();
  const client = await pool.connect();
  try {
    await acquireLock(client, options.lockTimeoutSeconds);
    try {
      await client.query(`create table if not exists ${MIGRATIONS_TABLE} (
        version integer primary key, name text not null, checksum text not null,
        applied_at timestamptz not null default now())`);
      const comparison = compareSchema(await readSchemaState(client), migrations);
      if (comparison.status === 'ahead' || comparison.status === 'diverged') throw new Error(describeMismatch(comparison));
      const state = await readSchemaState(client);
      const done = new Set(state.applied.map((r) => r.version));
      const applied: number[] = [];
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        try {
          await client.query('begin');
          await client.query(`insert into ${MIGRATIONS_TABLE} (version, name, checksum) values ($1, $2, $3)`, [
            migration.version,
            migration.name,
            migration.checksum,
          ]);
          await client.query(migration.sql);
          await client.query('commit');
          applied.push(migration.version);
          options.onApplied?.(migration);
        } catch (error) {
          await client.query('rollback');
          if (pgCode(error) === PG_UNIQUE_VIOLATION) continue;
          throw new Error(`migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`, { cause: error });
        }
      }
      return { applied, version: migrations.length };
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}
