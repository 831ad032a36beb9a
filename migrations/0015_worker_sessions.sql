-- Worker hosts whose liveness is tied to a database session (runtime/stores/worker-sessions.ts).
-- A worker host registers here once it holds its session-level advisory lock (key
-- hashtextextended('svc-worker:' || worker_id, 0)) on its LISTEN connection, and holds that lock
-- for as long as the process lives. expire_leases requeues the runs of a registered worker whose
-- lock is no longer held (its connection is gone: the process died) without waiting for the
-- lease; the lease stays the fence for a worker that is alive but stalled. Lease owners not
-- registered here (older releases, tests that claim by hand) keep lease expiry alone. Additive:
-- older releases neither need nor notice it.
create table worker_sessions (
  worker_id text primary key,
  registered_at timestamptz not null default now()
);
