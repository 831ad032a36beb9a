import type pg from 'pg';
import type { Logger } from '../log/index.js';

/** What keeps the service's tables vacuumed, as PostgreSQL reports it (checkAutovacuum). */
export interface AutovacuumState {
  /** The server's `autovacuum` setting is on (it also needs `track_counts`). */
  readonly server: boolean;
  /** Tables of the service's schema whose storage parameter `autovacuum_enabled` turns it off. */
  readonly tablesOff: readonly string[];
}

/**
 * Reads whether autovacuum covers the service's tables. Runs, attempts and inbox entries are
 * updated in place several times per run, and those updates change indexed columns (their
 * status is in partial indexes), so none of them is a HOT update: every one leaves a dead row
 * version and an entry in each of the table's indexes, which only VACUUM reclaims. Without it
 * the tables and indexes grow with every run and each write costs more (bench/RESULTS.md,
 * session 24: PostgreSQL's CPU per run 1.2–1.5 ms in a 10 s window, 2.0 ms over 45 s, on a
 * server with autovacuum off).
 */
export async function readAutovacuumState(pool: pg.Pool): Promise<AutovacuumState> {
  const { rows } = await pool.query<{ server: boolean; tables_off: string[] }>(
    `select current_setting('autovacuum') = 'on' and current_setting('track_counts') = 'on' as server,
       coalesce((select array_agg(c.relname::text order by c.relname) from pg_class c
         where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
           and exists (select 1 from unnest(c.reloptions) o where o ~* '^autovacuum_enabled=(false|off|no|f|n|0)$')), '{}') as tables_off`,
  );
  const row = rows[0];
  return { server: row?.server ?? true, tablesOff: row?.tables_off ?? [] };
}

/**
 * Logs a warning at startup when autovacuum does not cover the service's tables (the server
 * setting, or a table's own storage parameter). The service runs either way: an operator may
 * vacuum on a schedule instead; the warning says what to do.
 */
export async function checkAutovacuum(pool: pg.Pool, logger: Logger): Promise<AutovacuumState> {
  const state = await readAutovacuumState(pool);
  if (!state.server) {
    logger.warn(
      { autovacuum: 'off' },
      'PostgreSQL autovacuum is off (settings autovacuum and track_counts): runs, attempts and inbox entries are updated in place on every run, and without vacuum their dead rows and index entries accumulate and every write slows down; turn autovacuum on, or run VACUUM (ANALYZE) on the service database regularly',
    );
  } else if (state.tablesOff.length > 0) {
    logger.warn(
      { autovacuum_disabled_tables: state.tablesOff },
      `autovacuum is disabled on table(s) ${state.tablesOff.join(', ')} (storage parameter autovacuum_enabled): their dead rows and index entries accumulate; reset it (ALTER TABLE … RESET (autovacuum_enabled)) or run VACUUM (ANALYZE) on them regularly`,
    );
  }
  return state;
}
