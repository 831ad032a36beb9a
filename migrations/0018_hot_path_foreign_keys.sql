-- Issue #18: the run_id foreign keys of the rows a run's attempt writes on its hot path are
-- dropped (run_attempts, run_items, run_checkpoints → runs). Each check is a trigger that runs a
-- query against runs and locks the run's row FOR KEY SHARE (a heap write) on every insert: per
-- run, the attempt, two items and the checkpoint (auto_explain with log_triggers, bench/RESULTS.md
-- session 8).
--
-- What they guarded is guaranteed where the rows are written: run_attempts, run_items and
-- run_checkpoints are written only by the run's fenced attempt protocol (RUNS.md) or the
-- statement that inserts the run with its attempt, always for an existing run, and no run is
-- ever deleted (nothing deletes from runs), so run_checkpoints' ON DELETE CASCADE never fired.
-- These keys carry no workspace: the composite (workspace_id, …) foreign keys, which make the
-- schema itself refuse cross-workspace references (test/runtime/schema/cross-workspace.test.ts),
-- all stay, although they cost more (dropping all ten saved ~0.4 ms of PostgreSQL execution
-- per run; the share of these three was not measured apart): tenant isolation is not traded
-- for speed.
alter table run_attempts drop constraint if exists run_attempts_run_id_fkey;
alter table run_items drop constraint if exists run_items_run_id_fkey;
alter table run_checkpoints drop constraint if exists run_checkpoints_run_id_fkey;
