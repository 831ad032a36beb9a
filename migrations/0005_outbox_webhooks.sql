-- The shared outbox (spec 6), webhook subscriptions, invitations and mail links.
-- pg-boss keeps its own schema (created by pg-boss itself at startup), never here.

create table subscriptions (
  id text primary key,
  workspace_id text not null references workspaces (id),
  url text not null,
  events text[] not null,
  description text not null default '',
  enabled boolean not null default true,
  -- the whsec_ secret, encrypted with the key ring (AAD binds workspace and subscription).
  secret_ciphertext text not null,
  created_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id)
);
create index subscriptions_workspace_idx on subscriptions (workspace_id, id);

-- One row per delivery of any kind. A row is written in the transaction of the change it
-- announces, so it exists exactly when the change committed. The sender claims pending rows
-- with `for update skip locked` and holds them until lease_until; claim_token fences the
-- settle, so a sender whose lease ran out cannot overwrite the next holder's result.
create table outbox (
  id text primary key,
  kind text not null check (kind in ('webhook', 'email', 'child_result', 'memory_purge', 'checkpoint_cleanup')),
  workspace_id text references workspaces (id),
  subscription_id text,
  event_type text,
  payload jsonb not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'dead')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  lease_until timestamptz,
  claim_token text,
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  last_response text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- when the row reached delivered or dead: retention counts from here.
  settled_at timestamptz,
  unique (workspace_id, id),
  -- deleting a subscription removes its deliveries (MATCH SIMPLE: rows of other kinds carry
  -- no subscription and are not checked).
  foreign key (workspace_id, subscription_id) references subscriptions (workspace_id, id) on delete cascade,
  check ((state = 'pending') = (settled_at is null))
);
create index outbox_pending_idx on outbox (kind, next_attempt_at) where state = 'pending';
create index outbox_settled_idx on outbox (kind, state, settled_at) where state <> 'pending';
create index outbox_subscription_idx on outbox (workspace_id, subscription_id, id) where subscription_id is not null;

-- Per-kind state shared by control replicas: since when the backlog condition holds (the
-- alert needs it to last backlog_alert_seconds whichever replica ran the passes) and when
-- the kind was last purged (its purge_interval_seconds).
create table outbox_kind_states (
  kind text primary key,
  backlog_since timestamptz,
  purged_at timestamptz
);

create table invitations (
  id text primary key,
  workspace_id text not null references workspaces (id),
  email text not null,
  role text not null check (role in ('admin', 'member', 'viewer')),
  -- only a SHA-256 of the token is stored; the token travels only in the mail.
  token_hash bytea not null unique,
  invited_by_id text references users (id),
  accepted_by_id text references users (id),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  unique (workspace_id, id)
);
create index invitations_workspace_idx on invitations (workspace_id, id);
create index invitations_expiry_idx on invitations (expires_at) where accepted_at is null;

-- Single-use links sent by mail (password reset). Deleted by expire_credentials once used
-- or expired.
create table mail_links (
  id text primary key,
  purpose text not null check (purpose in ('password_reset')),
  user_id text not null references users (id),
  token_hash bytea not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index mail_links_expiry_idx on mail_links (expires_at);
create index mail_links_user_idx on mail_links (user_id);
