-- Providers (five kinds) and models. Credentials are stored only as key-ring ciphertext
-- (AES-256-GCM envelope, AAD binding workspace, provider and field); never returned.
create table providers (
  id text primary key,
  workspace_id text not null references workspaces (id),
  kind text not null check (kind in ('model', 'web', 'environment', 'connector', 'memory')),
  type text not null,
  name text not null,
  config jsonb not null default '{}'::jsonb,
  credential_ciphertext text,
  enabled boolean not null default true,
  created_by_id text,
  updated_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id)
);
create index providers_workspace_kind_idx on providers (workspace_id, kind, id);

-- Models are identified by key within the workspace (no id); the composite foreign key makes
-- a model of one workspace pointing at another workspace's provider unstorable.
create table models (
  workspace_id text not null references workspaces (id),
  key text not null check (key ~ '^[a-z0-9][a-z0-9.-]{0,127}$'),
  provider_id text not null,
  model text not null,
  api text,
  display_name text not null default '',
  characteristics jsonb not null default '{}'::jsonb,
  settings jsonb not null default '{}'::jsonb,
  enabled boolean not null default true,
  created_by_id text,
  updated_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  primary key (workspace_id, key),
  foreign key (workspace_id, provider_id) references providers (workspace_id, id)
);
