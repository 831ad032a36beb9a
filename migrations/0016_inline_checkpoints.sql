-- Small checkpoints stored in PostgreSQL, written in the transaction of the step that commits
-- them (no object write, no fsync of a file per step). runs.checkpoint_key names them with the
-- prefix `inline:` (e.g. `inline:runs/<run>/checkpoints/000003-<attempt>.msgpack`); larger ones
-- stay in the object store under the unprefixed key, as before.
-- A table of its own, not a bytea column of runs: runs is read with `select *` on every API read
-- and claim, and older replicas return its columns in run views (see 0013). The previous
-- release runs unchanged against this schema (it never reads the table); its workers cannot
-- read an `inline:` checkpoint, so objects.inline_checkpoint_max_bytes = 0 keeps every checkpoint
-- an object until no worker of that release runs.
-- One row per checkpoint still pointed to: a step that replaces its run's own inline checkpoint
-- deletes the old row in its transaction (a replaced object checkpoint goes to the
-- checkpoint_cleanup outbox as before). A resumed successor points at its waiting
-- predecessor's checkpoint, which stays with the predecessor.
create table run_checkpoints (
  key text primary key,
  run_id text not null references runs (id) on delete cascade,
  state bytea not null,
  created_at timestamptz not null default now()
);
create index run_checkpoints_run_idx on run_checkpoints (run_id);
