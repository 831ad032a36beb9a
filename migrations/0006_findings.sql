-- Findings (spec 2.9), finding analyses (spec 2.10) and the per-workspace finding agent.
-- Every table carries workspace_id with unique (workspace_id, id) where it has an id, and every
-- reference is a composite foreign key through workspace_id, so a finding can never cite an
-- agent, revision, analysis or run of another workspace.

-- The one prepared finding agent of a workspace (POST /finding-agent). The primary key makes
-- "once per workspace" hold even for two concurrent first calls.
create table finding_agents (
  workspace_id text primary key references workspaces (id),
  agent_id text not null,
  created_at timestamptz not null default now(),
  foreign key (workspace_id, agent_id) references agents (workspace_id, id)
);

create table finding_analyses (
  id text primary key,
  workspace_id text not null,
  -- the analysed agent; the analysis run executes the finding agent
  agent_id text not null,
  run_id text not null,
  session_id text not null,
  thread_id text not null,
  -- {agent_id, trace_id, max_traces, presets, started_after, started_before} as requested
  selection jsonb not null,
  -- [{run_id, trace_id}] chosen when the analysis started, newest first
  selected_traces jsonb not null,
  selection_truncated boolean not null,
  -- trace ids whose content was put into the analysis input (the input is bounded in size)
  read_trace_ids jsonb not null,
  -- set by the seal hook in the transaction that seals the analysis run
  finding_count integer not null default 0,
  cited_trace_count integer not null default 0,
  created_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id),
  -- the seal hook finds the analysis by its run: one analysis per run
  unique (run_id),
  foreign key (workspace_id, agent_id) references agents (workspace_id, id),
  foreign key (workspace_id, run_id) references runs (workspace_id, id),
  foreign key (workspace_id, session_id) references sessions (workspace_id, id),
  foreign key (workspace_id, thread_id) references threads (workspace_id, id)
);

create table findings (
  id text primary key,
  workspace_id text not null,
  agent_id text not null,
  agent_revision_id text not null,
  analysis_id text,
  source_run_id text,
  source_key text not null check (length(source_key) between 1 and 256),
  category text not null check (category in ('unclear_request', 'tool_misuse', 'hallucination', 'instruction_violation', 'inefficiency', 'error_handling', 'other')),
  severity text not null check (severity in ('none', 'low', 'medium', 'high', 'critical')),
  title text not null,
  explanation text not null,
  suggestion text not null,
  limitations text not null default '',
  assessment text not null default 'unreviewed' check (assessment in ('unreviewed', 'confirmed', 'dismissed')),
  assessment_note text not null default '',
  closed boolean not null default false,
  -- [{run_id, trace_id, span_ids}]; every run_id was checked to be a run of agent_id
  evidence jsonb not null default '[]'::jsonb,
  created_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id),
  foreign key (workspace_id, agent_id) references agents (workspace_id, id),
  foreign key (workspace_id, agent_id, agent_revision_id) references agent_revisions (workspace_id, agent_id, id),
  foreign key (workspace_id, analysis_id) references finding_analyses (workspace_id, id),
  foreign key (workspace_id, source_run_id) references runs (workspace_id, id)
);
-- source_key identifies a finding for its author: unique per agent among findings created
-- through the API (a second create is 409), and per analysis among analysis findings (the seal
-- hook inserts with on conflict do nothing, so a repeated output adds no duplicates). Two
-- analyses may reuse a key: a model names its findings per analysis.
create unique index findings_api_source_key_idx on findings (workspace_id, agent_id, source_key) where analysis_id is null;
create unique index findings_analysis_source_key_idx on findings (analysis_id, source_key) where analysis_id is not null;
create index findings_workspace_idx on findings (workspace_id, id);

-- Trace selection reads an agent's sealed runs newest first within a time window.
create index runs_agent_created_idx on runs (workspace_id, agent_id, created_at desc, id desc);
