-- Identity, credentials, audit and idempotency: the tables every endpoint stands on.
-- Workspace-scoped tables carry workspace_id and a unique (workspace_id, id) so that other
-- tables can reference them with composite foreign keys: a cross-workspace reference cannot
-- be stored, whatever the application code does.

create table organizations (
  id text primary key,
  name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table workspaces (
  id text primary key,
  organization_id text not null references organizations (id),
  name text not null,
  created_by_id text,
  updated_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1
);
create index workspaces_organization_idx on workspaces (organization_id);

create table users (
  id text primary key,
  organization_id text not null references organizations (id),
  email text not null,
  name text not null default '',
  image_url text not null default '',
  password_hash text,
  -- organization-level role: 'admin' may create workspaces and manage the organization.
  organization_role text not null default 'member' check (organization_role in ('admin', 'member')),
  -- disabling keeps memberships and keys untouched, so re-enabling restores them exactly.
  disabled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1
);
create unique index users_email_key on users (lower(email));

create table memberships (
  workspace_id text not null references workspaces (id),
  user_id text not null references users (id),
  role text not null check (role in ('admin', 'member', 'viewer')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
create index memberships_user_idx on memberships (user_id);

create table api_keys (
  id text primary key,
  workspace_id text not null references workspaces (id),
  name text not null,
  role text not null check (role in ('admin', 'member', 'viewer')),
  -- only a SHA-256 of the secret is stored; the secret is shown once at creation.
  secret_hash bytea not null unique,
  secret_hint text not null,
  created_by_id text not null references users (id),
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  unique (workspace_id, id)
);
create index api_keys_workspace_idx on api_keys (workspace_id, created_at);

create table login_sessions (
  id text primary key,
  user_id text not null references users (id),
  token_hash bytea not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  last_seen_at timestamptz
);
create index login_sessions_user_idx on login_sessions (user_id);
create index login_sessions_expiry_idx on login_sessions (expires_at);

create table audit_events (
  id text primary key,
  workspace_id text not null references workspaces (id),
  actor_id text,
  action text not null,
  resource_type text not null,
  resource_id text not null,
  request_id text,
  changes jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index audit_events_resource_idx on audit_events (workspace_id, resource_type, resource_id, id);
create index audit_events_workspace_idx on audit_events (workspace_id, id);

-- Idempotency: a request with a key first claims its row in a short transaction of its own
-- (state in_flight, held until locked_until); the effect's transaction then completes it with
-- the response, so the effect and its record commit together. A twin arriving while the row
-- is in flight gets 409; after completion it gets the stored response; a claim whose holder
-- died is taken over once locked_until passes (its effect never committed).
create table idempotency_keys (
  workspace_id text not null,
  principal_id text not null,
  method text not null,
  route text not null,
  key text not null,
  fingerprint text not null,
  state text not null check (state in ('in_flight', 'completed')),
  locked_until timestamptz,
  -- the holder's random token: completing requires it, so a holder that lost its claim to a
  -- takeover cannot commit a second effect.
  claim_token text,
  status_code integer,
  response_body text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (workspace_id, principal_id, method, route, key)
);
create index idempotency_keys_expiry_idx on idempotency_keys (expires_at);
