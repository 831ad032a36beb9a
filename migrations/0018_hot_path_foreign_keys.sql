-- Issue #18: the foreign keys checked on every run's hot inserts are dropped. Each check is a
-- trigger that runs a query against the parent and locks the parent row FOR KEY SHARE (a heap
-- write, and a MultiXact when concurrent runs share the parent: every run of an agent shares
-- its revision row). Measured with pg_stat_statements under run-throughput (bench/RESULTS.md,
-- session 8): the inbox POST's statement 0.54/0.64 → 0.41/0.39 ms, the seal 0.37/0.40 →
-- 0.31/0.28 ms, about 0.4 ms of PostgreSQL time per run in all.
--
-- What the constraints guarded is guaranteed where the rows are written, and stated there:
-- - runs and inbox_entries take their thread and session from the thread row the same statement
--   locks (runtime/stores/enqueue-input.ts; insertRun and insertEntry run under the thread's
--   row lock taken by lockThreadTakingPosition), so both are the thread's own, in its workspace;
-- - the agent and revision of an entry and a run are checked in the workspace before the write
--   (checkInput), and revisions are immutable and never deleted;
-- - run_attempts, run_items and run_checkpoints are written by the run's fenced attempt protocol
--   for an existing run (RUNS.md), and no run is ever deleted (nothing deletes from runs).
-- No row of runs, threads, sessions, agents or agent_revisions is ever deleted and their keys
-- never change, so the cascades and no-action checks these constraints also carried never fired.
-- The constraints that stay (thread → session, the tables written off the hot path) are kept.
alter table inbox_entries drop constraint if exists inbox_entries_workspace_id_thread_id_fkey;
alter table inbox_entries drop constraint if exists inbox_entries_workspace_id_agent_id_fkey;
alter table inbox_entries drop constraint if exists inbox_entries_workspace_id_agent_id_agent_revision_id_fkey;
alter table runs drop constraint if exists runs_workspace_id_thread_id_fkey;
alter table runs drop constraint if exists runs_workspace_id_session_id_fkey;
alter table runs drop constraint if exists runs_workspace_id_agent_id_agent_revision_id_fkey;
alter table runs drop constraint if exists runs_workspace_id_parent_run_id_fkey;
alter table run_attempts drop constraint if exists run_attempts_run_id_fkey;
alter table run_items drop constraint if exists run_items_run_id_fkey;
alter table run_checkpoints drop constraint if exists run_checkpoints_run_id_fkey;
