import { toIso, type Queryable } from '../db/index.js';
import { headFilterClause, headSetClause, type HeadChanges, type HeadListFilter } from './head-list-filter.js';

/** A skill head: the same head machinery as agents (name, description, labels, default revision). */
export interface SkillRow {
  id: string;
  workspace_id: string;
  organization_id: string;
  name: string;
  description: string;
  labels: Record<string, string>;
  default_revision_id: string;
  revision_count: number;
  archived_at: string | null;
  created_by_id: string | null;
  updated_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const mapSkill = (row: Record<string, unknown>): SkillRow => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  organization_id: row.organization_id as string,
  name: row.name as string,
  description: row.description as string,
  labels: row.labels as Record<string, string>,
  default_revision_id: row.default_revision_id as string,
  revision_count: row.revision_count as number,
  archived_at: toIso(row.archived_at),
  created_by_id: (row.created_by_id as string | null) ?? null,
  updated_by_id: (row.updated_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

/** Inserts a head that already counts its first revision (inserted after it: the key is deferred). */
export async function insertSkill(
  db: Queryable,
  row: { id: string; workspace_id: string; name: string; description: string; labels: Record<string, string>; default_revision_id: string; created_by_id: string | null },
): Promise<SkillRow> {
  const result = await db.query(
    `insert into skills (id, workspace_id, organization_id, name, description, labels, revision_count, default_revision_id, created_by_id, updated_by_id)
     select $1, w.id, w.organization_id, $3, $4, $5, 1, $6, $7, $7 from workspaces w where w.id = $2
     returning *`,
    [row.id, row.workspace_id, row.name, row.description, JSON.stringify(row.labels), row.default_revision_id, row.created_by_id],
  );
  return mapSkill(result.rows[0]);
}

export async function getSkill(db: Queryable, workspaceId: string, id: string): Promise<SkillRow | null> {
  const result = await db.query(`select * from skills where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapSkill(result.rows[0]) : null;
}

/** The head, locked for the transaction: head changes and publishes serialize per skill. */
export async function lockSkill(db: Queryable, workspaceId: string, id: string): Promise<SkillRow | null> {
  const result = await db.query(`select * from skills where workspace_id = $1 and id = $2 for update`, [workspaceId, id]);
  return result.rows[0] ? mapSkill(result.rows[0]) : null;
}

/** Optimistic update: null when the version moved (the caller answers 412). */
export async function updateSkill(db: Queryable, workspaceId: string, id: string, version: number, changes: HeadChanges, actorId: string | null): Promise<SkillRow | null> {
  const { set, values } = headSetClause(changes, actorId);
  const result = await db.query(`update skills set ${set} where workspace_id = $1 and id = $2 and version = $3 returning *`, [workspaceId, id, version, ...values]);
  return result.rows[0] ? mapSkill(result.rows[0]) : null;
}

export async function listSkills(db: Queryable, workspaceId: string, filter: HeadListFilter): Promise<SkillRow[]> {
  const { clause, values } = headFilterClause(filter);
  const result = await db.query(`select * from skills where workspace_id = $1 and ${clause} order by id limit $6`, [workspaceId, ...values, filter.limit]);
  return result.rows.map(mapSkill);
}
