import { toIso, type Queryable } from '../db/index.js';

/** One file of a skill package: its bytes live in the object store under its SHA-256. */
export interface SkillFileEntry {
  path: string;
  size: number;
  sha256: string;
}

export interface SkillRevisionRow {
  id: string;
  workspace_id: string;
  skill_id: string;
  number: number;
  note: string;
  digest: string;
  files: SkillFileEntry[];
  file_count: number;
  size_bytes: number;
  created_by_id: string | null;
  created_at: string;
}

const mapSkillRevision = (row: Record<string, unknown>): SkillRevisionRow => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  skill_id: row.skill_id as string,
  number: row.number as number,
  note: row.note as string,
  digest: row.digest as string,
  files: row.files as SkillFileEntry[],
  file_count: row.file_count as number,
  // bigint arrives as text; a package is bounded far below 2^53 bytes
  size_bytes: Number(row.size_bytes),
  created_by_id: (row.created_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
});

export async function insertSkillRevision(
  db: Queryable,
  row: { id: string; workspace_id: string; skill_id: string; number: number; note: string; digest: string; files: SkillFileEntry[]; created_by_id: string | null },
): Promise<SkillRevisionRow> {
  const size = row.files.reduce((sum, f) => sum + f.size, 0);
  const result = await db.query(
    `insert into skill_revisions (id, workspace_id, skill_id, number, note, digest, files, file_count, size_bytes, created_by_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning *`,
    [row.id, row.workspace_id, row.skill_id, row.number, row.note, row.digest, JSON.stringify(row.files), row.files.length, size, row.created_by_id],
  );
  return mapSkillRevision(result.rows[0]);
}

/** A revision of the given skill in the workspace (null when absent or another skill's). */
export async function getSkillRevision(db: Queryable, workspaceId: string, skillId: string, id: string): Promise<SkillRevisionRow | null> {
  const result = await db.query(`select * from skill_revisions where workspace_id = $1 and skill_id = $2 and id = $3`, [workspaceId, skillId, id]);
  return result.rows[0] ? mapSkillRevision(result.rows[0]) : null;
}

/** A revision by id alone within the workspace (agent configs name skill revisions this way). */
export async function findSkillRevision(db: Queryable, workspaceId: string, id: string): Promise<SkillRevisionRow | null> {
  const result = await db.query(`select * from skill_revisions where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapSkillRevision(result.rows[0]) : null;
}

/** Newest first; `before` is the cursor position (an exclusive upper bound on number). */
export async function listSkillRevisions(db: Queryable, workspaceId: string, skillId: string, page: { limit: number; before?: number }): Promise<SkillRevisionRow[]> {
  const result = await db.query(
    `select * from skill_revisions where workspace_id = $1 and skill_id = $2 and ($3::int is null or number < $3) order by number desc limit $4`,
    [workspaceId, skillId, page.before ?? null, page.limit],
  );
  return result.rows.map(mapSkillRevision);
}
