-- Sessions, threads, inbox entries, runs, attempts, items and display pages: the run engine.
-- Every table is workspace-scoped with composite foreign keys, so a run can never point at
-- another workspace's thread, session or agent.

create table sessions (
  id text primary key,
  workspace_id text not null references workspaces (id),
  labels jsonb not null default '{}'::jsonb,
  created_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id)
);
create index sessions_workspace_idx on sessions (workspace_id, id);

create table threads (
  id text primary key,
  workspace_id text not null,
  session_id text not null,
  labels jsonb not null default '{}'::jsonb,
  -- the run that holds the thread (accepted, running or waiting); null when the thread is idle
  current_run_id text,
  last_run_id text,
  origin text not null default 'new',
  origin_run_id text,
  origin_thread_id text,
  origin_tool_call_id text,
  subagent text,
  mcp_headers jsonb not null default '{}'::jsonb,
  message_history jsonb not null default '[]'::jsonb,
  -- next inbox position: assigned under the thread row lock, so positions are gap-free
  next_position integer not null default 1,
  archived_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id),
  foreign key (workspace_id, session_id) references sessions (workspace_id, id)
);
create index threads_session_idx on threads (workspace_id, session_id, id);

create table runs (
  id text primary key,
  workspace_id text not null,
  session_id text not null,
  thread_id text not null,
  agent_id text not null,
  agent_revision_id text not null,
  revision_selection text not null,
  status text not null check (status in ('accepted', 'running', 'waiting', 'completed', 'failed', 'cancelled')),
  wait_reason text,
  trigger text not null,
  lineage text not null,
  parent_run_id text,
  source_entry_id text,
  principal_id text,
  resumed_by_id text,
  attempts integer not null default 0,
  -- attempts that count against max_attempts: expired or failed ones, not drain handoffs
  charged_attempts integer not null default 0,
  max_attempts integer not null,
  current_attempt_id text,
  lease_owner text,
  lease_expires_at timestamptz,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  sealed_at timestamptz,
  cancel_requested_at timestamptz,
  updated_at timestamptz not null default now(),
  display_position text not null default '0',
  labels jsonb not null default '{}'::jsonb,
  input jsonb not null default '{}'::jsonb,
  output jsonb,
  failure jsonb,
  environment_mounts jsonb not null default '[]'::jsonb,
  memory_mounts jsonb not null default '[]'::jsonb,
  options jsonb not null default '{}'::jsonb,
  -- the agent configuration with the run's overrides applied, fixed when the run was created
  config jsonb not null default '{}'::jsonb,
  pending jsonb,
  resume jsonb,
  usage jsonb not null default '{"requests": 0, "input_tokens": 0, "output_tokens": 0}'::jsonb,
  usage_at_seal jsonb,
  -- checkpoint pointer and the first ordinal not yet committed; they move together with the
  -- committed items of a step, in one transaction
  checkpoint_seq integer not null default 0,
  checkpoint_key text,
  next_ordinal integer not null default 1,
  -- the thread's message_history length when the run started and after it sealed: a fork
  -- continues from exactly the history the run had committed
  history_start integer not null default 0,
  history_end integer,
  version integer not null default 1,
  unique (workspace_id, id),
  foreign key (workspace_id, thread_id) references threads (workspace_id, id),
  foreign key (workspace_id, session_id) references sessions (workspace_id, id),
  foreign key (workspace_id, parent_run_id) references runs (workspace_id, id),
  -- the pinned revision belongs to the run's agent, in the run's workspace
  foreign key (workspace_id, agent_id, agent_revision_id) references agent_revisions (workspace_id, agent_id, id)
);
-- at most one run of a thread is accepted or running at a time (RUNS.md invariant 1)
create unique index runs_one_active_per_thread on runs (thread_id) where status in ('accepted', 'running');
create index runs_claimable_idx on runs (created_at) where status = 'accepted';
create index runs_lease_idx on runs (lease_expires_at) where status = 'running';
create index runs_thread_idx on runs (workspace_id, thread_id, id);

create table inbox_entries (
  id text primary key,
  workspace_id text not null,
  thread_id text not null,
  kind text not null default 'message',
  delivery text not null check (delivery in ('queue', 'steer')),
  status text not null check (status in ('pending', 'assigned', 'incorporated', 'completed', 'failed', 'withdrawn')),
  position integer not null,
  payload jsonb not null,
  options jsonb not null default '{}'::jsonb,
  agent_id text not null,
  agent_revision_id text,
  principal_id text,
  origin_run_id text,
  assigned_run_id text,
  child_run_id text,
  incorporated_checkpoint_seq integer,
  failure jsonb,
  -- the Idempotency-Key of the request that created the entry; a withdrawn entry keeps it
  request_key text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  -- internal version for the entry's ETag (If-Match on withdraw)
  version integer not null default 1,
  unique (workspace_id, id),
  -- positions are unique per thread (gap-free by construction: next_position under the lock)
  unique (thread_id, position),
  foreign key (workspace_id, thread_id) references threads (workspace_id, id),
  foreign key (workspace_id, agent_id) references agents (workspace_id, id),
  -- a pinned revision must be one of the entry's agent (MATCH SIMPLE: unpinned entries skip it)
  foreign key (workspace_id, agent_id, agent_revision_id) references agent_revisions (workspace_id, agent_id, id)
);
create index inbox_entries_pending_idx on inbox_entries (thread_id, position) where status = 'pending';

create table run_attempts (
  id text primary key,
  run_id text not null references runs (id),
  number integer not null,
  worker_id text not null,
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  outcome text,
  charged boolean not null default false,
  unique (run_id, number)
);

-- Committed items not yet packed into a display page. A committed item never changes again.
create table run_items (
  run_id text not null references runs (id),
  ordinal integer not null check (ordinal >= 1),
  id text not null,
  kind text not null,
  state text not null,
  content jsonb not null,
  content_refs jsonb not null default '{}'::jsonb,
  first_stream_id text,
  last_stream_id text,
  started_at timestamptz,
  ended_at timestamptz,
  primary key (run_id, ordinal)
);

-- Display pages: committed items packed into compressed objects, with their pointers.
create table run_display_pages (
  run_id text not null references runs (id),
  first_ordinal integer not null,
  last_ordinal integer not null,
  object_key text not null,
  digest text not null,
  size_bytes integer not null,
  item_count integer not null,
  created_at timestamptz not null default now(),
  primary key (run_id, first_ordinal)
);

