import { noteChange, toIso, type Queryable } from '../db/index.js';
import { headFilterClause, headSetClause, type HeadChanges, type HeadListFilter } from './head-list-filter.js';

/** An agent head row (spec 2.3) plus the internal columns views leave out. */
export interface AgentRow {
  id: string;
  workspace_id: string;
  organization_id: string;
  name: string;
  description: string;
  labels: Record<string, string>;
  default_revision_id: string;
  revision_count: number;
  avatar_key: string | null;
  avatar_media_type: string | null;
  avatar_sha256: string | null;
  archived_at: string | null;
  preset_kind: string | null;
  source: string;
  created_by_id: string | null;
  updated_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const mapAgent = (row: Record<string, unknown>): AgentRow => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  organization_id: row.organization_id as string,
  name: row.name as string,
  description: row.description as string,
  labels: row.labels as Record<string, string>,
  default_revision_id: row.default_revision_id as string,
  revision_count: row.revision_count as number,
  avatar_key: (row.avatar_key as string | null) ?? null,
  avatar_media_type: (row.avatar_media_type as string | null) ?? null,
  avatar_sha256: (row.avatar_sha256 as string | null) ?? null,
  archived_at: toIso(row.archived_at),
  preset_kind: (row.preset_kind as string | null) ?? null,
  source: row.source as string,
  created_by_id: (row.created_by_id as string | null) ?? null,
  updated_by_id: (row.updated_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

export interface NewAgent {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  labels: Record<string, string>;
  /** The first revision's id; the deferred foreign key lets it be inserted after the head. */
  default_revision_id: string;
  preset_kind?: string | null;
  source?: string;
  created_by_id: string | null;
}

/** Inserts a head that already counts its first revision (revision_count 1). */
export async function insertAgent(db: Queryable, row: NewAgent): Promise<AgentRow> {
  const result = await db.query(
    `insert into agents (id, workspace_id, organization_id, name, description, labels, revision_count, default_revision_id, preset_kind, source, created_by_id, updated_by_id)
     select $1, w.id, w.organization_id, $3, $4, $5, 1, $6, $7, $8, $9, $9 from workspaces w where w.id = $2
     returning *`,
    [row.id, row.workspace_id, row.name, row.description, JSON.stringify(row.labels), row.default_revision_id, row.preset_kind ?? null, row.source ?? 'custom', row.created_by_id],
  );
  return mapAgent(result.rows[0]);
}

export async function getAgent(db: Queryable, workspaceId: string, id: string): Promise<AgentRow | null> {
  const result = await db.query(`select * from agents where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapAgent(result.rows[0]) : null;
}

/**
 * The head, locked for the rest of the transaction. Every head change and every publish takes
 * this lock first, so they serialize per agent: that is what keeps revision numbers gap-free.
 */
export async function lockAgent(db: Queryable, workspaceId: string, id: string): Promise<AgentRow | null> {
  const result = await db.query(`select * from agents where workspace_id = $1 and id = $2 for update`, [workspaceId, id]);
  return result.rows[0] ? mapAgent(result.rows[0]) : null;
}

/** Optimistic update: null when the version moved (the caller answers 412). */
export async function updateAgent(db: Queryable, workspaceId: string, id: string, version: number, changes: HeadChanges, actorId: string | null): Promise<AgentRow | null> {
  const { set, values } = headSetClause(changes, actorId);
  const result = await db.query(`update agents set ${set} where workspace_id = $1 and id = $2 and version = $3 returning *`, [workspaceId, id, version, ...values]);
  noteChange(db, { kind: 'agent', id });
  return result.rows[0] ? mapAgent(result.rows[0]) : null;
}

export async function setAgentAvatar(
  db: Queryable,
  workspaceId: string,
  id: string,
  version: number,
  avatar: { key: string; media_type: string; sha256: string },
  actorId: string | null,
): Promise<AgentRow | null> {
  const result = await db.query(
    `update agents set avatar_key = $4, avatar_media_type = $5, avatar_sha256 = $6, updated_by_id = $7, updated_at = now(), version = version + 1
      where workspace_id = $1 and id = $2 and version = $3 returning *`,
    [workspaceId, id, version, avatar.key, avatar.media_type, avatar.sha256, actorId],
  );
  noteChange(db, { kind: 'agent', id });
  return result.rows[0] ? mapAgent(result.rows[0]) : null;
}

export async function listAgents(db: Queryable, workspaceId: string, filter: HeadListFilter): Promise<AgentRow[]> {
  const { clause, values } = headFilterClause(filter);
  const result = await db.query(`select * from agents where workspace_id = $1 and ${clause} order by id limit $6`, [workspaceId, ...values, filter.limit]);
  return result.rows.map(mapAgent);
}
