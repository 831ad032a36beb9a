-- Skill packages placed in an environment (TOOLS.md "Skills in runs": with an environment, a
-- run's pinned packages are also placed under /skills/<name>/). One row per environment and
-- skill: the revision whose files are there and the folder name, so a thread's later runs
-- pinning the same revision upload nothing. A table of its own rather than a column of
-- environments: additive, and older releases neither need nor notice it. Rows go with their
-- environment's row (cascade), and a replaced environment starts with none.
create table environment_skill_packages (
  environment_id text not null references environments (id) on delete cascade,
  skill_id text not null,
  revision_id text not null,
  name text not null,
  placed_at timestamptz not null default now(),
  primary key (environment_id, skill_id)
);
