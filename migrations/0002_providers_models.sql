-- Providers (five kinds) and models.
--
-- A provider's credential is stored field by field in `credential` as {field: key-ring token}
-- (AES-256-GCM envelope; the AAD binds workspace, provider and field, so a token copied to
-- another row or field does not decrypt). Field names are not secret; values never leave the
-- key ring in clear except to make an outbound call. null = no credential stored.
create table providers (
  id text primary key,
  workspace_id text not null references workspaces (id),
  kind text not null check (kind in ('model', 'web', 'environment', 'connector', 'memory')),
  type text not null,
  name text not null,
  config jsonb not null default '{}'::jsonb,
  credential jsonb check (credential is null or jsonb_typeof(credential) = 'object'),
  enabled boolean not null default true,
  created_by_id text,
  updated_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id)
);
-- Lists page by id within one kind's collection.
create index providers_workspace_kind_idx on providers (workspace_id, kind, id);

-- Models are identified by key within the workspace (no id); the composite foreign key makes
-- a model of one workspace pointing at another workspace's provider unstorable. `api` is the
-- wire API resolved at write time (the provider type's default when the client gave none).
create table models (
  workspace_id text not null references workspaces (id),
  key text not null check (key ~ '^[a-z0-9][a-z0-9.-]{0,127}$'),
  provider_id text not null,
  model text not null,
  api text not null,
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
create index models_provider_idx on models (workspace_id, provider_id);
