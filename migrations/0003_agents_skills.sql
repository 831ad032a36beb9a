-- Agents and skills: revisioned resources, a mutable head plus immutable numbered revisions.
-- Every table carries workspace_id with unique (workspace_id, id), and every reference is a
-- composite foreign key through workspace_id, so a cross-workspace reference cannot be stored.

create table agents (
  id text primary key,
  workspace_id text not null references workspaces (id),
  organization_id text not null references organizations (id),
  name text not null,
  description text not null default '',
  labels jsonb not null default '{}'::jsonb,
  -- the highest revision number handed out. Publishing locks this row (select … for update)
  -- and takes revision_count + 1, so numbers are gap-free and never reused.
  revision_count integer not null default 0 check (revision_count >= 0),
  default_revision_id text not null,
  -- avatar: object-store key, sniffed media type and content digest (the digest versions image_url)
  avatar_key text,
  avatar_media_type text,
  avatar_sha256 text,
  archived_at timestamptz,
  preset_kind text,
  source text not null default 'custom',
  created_by_id text,
  updated_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id)
);
create index agents_workspace_idx on agents (workspace_id, id);
create index agents_labels_idx on agents using gin (labels jsonb_path_ops);

create table agent_revisions (
  id text primary key,
  workspace_id text not null,
  agent_id text not null,
  number integer not null check (number >= 1),
  note text not null default '',
  -- SHA-256 hex of the canonical (key-sorted) validated configuration: equal content, equal digest.
  digest text not null,
  config jsonb not null,
  created_by_id text,
  created_at timestamptz not null default now(),
  unique (workspace_id, id),
  unique (workspace_id, agent_id, id),
  -- a backstop for the head lock: even a buggy writer cannot store two revisions with one number.
  unique (agent_id, number),
  foreign key (workspace_id, agent_id) references agents (workspace_id, id)
);

-- The default revision must be a revision of this very head (same workspace, same agent).
-- Deferred, so a head and its first revision are inserted in one transaction in either order.
alter table agents add constraint agents_default_revision_fk
  foreign key (workspace_id, id, default_revision_id) references agent_revisions (workspace_id, agent_id, id)
  deferrable initially deferred;

create table skills (
  id text primary key,
  workspace_id text not null references workspaces (id),
  organization_id text not null references organizations (id),
  name text not null,
  description text not null default '',
  labels jsonb not null default '{}'::jsonb,
  -- same gap-free numbering invariant as agents.revision_count
  revision_count integer not null default 0 check (revision_count >= 0),
  default_revision_id text not null,
  archived_at timestamptz,
  created_by_id text,
  updated_by_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  version integer not null default 1,
  unique (workspace_id, id)
);
create index skills_workspace_idx on skills (workspace_id, id);
create index skills_labels_idx on skills using gin (labels jsonb_path_ops);

create table skill_revisions (
  id text primary key,
  workspace_id text not null,
  skill_id text not null,
  number integer not null check (number >= 1),
  note text not null default '',
  -- SHA-256 hex of the canonical package manifest (paths and file digests)
  digest text not null,
  -- [{path, size, sha256}] sorted by path; file bytes live in the object store by sha256
  files jsonb not null,
  file_count integer not null,
  size_bytes bigint not null,
  created_by_id text,
  created_at timestamptz not null default now(),
  unique (workspace_id, id),
  unique (workspace_id, skill_id, id),
  unique (skill_id, number),
  foreign key (workspace_id, skill_id) references skills (workspace_id, id)
);

alter table skills add constraint skills_default_revision_fk
  foreign key (workspace_id, id, default_revision_id) references skill_revisions (workspace_id, skill_id, id)
  deferrable initially deferred;
