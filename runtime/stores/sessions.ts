import { toIso, type Queryable } from '../db/index.js';

export interface Session {
  id: string;
  workspace_id: string;
  labels: Record<string, string>;
  created_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const mapSession = (row: Record<string, unknown>): Session => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  labels: row.labels as Record<string, string>,
  created_by_id: (row.created_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

export async function insertSession(db: Queryable, row: { id: string; workspace_id: string; labels: Record<string, string>; created_by_id: string }): Promise<Session> {
  const result = await db.query(`insert into sessions (id, workspace_id, labels, created_by_id) values ($1, $2, $3, $4) returning *`, [
    row.id,
    row.workspace_id,
    JSON.stringify(row.labels),
    row.created_by_id,
  ]);
  return mapSession(result.rows[0]);
}

export async function getSession(db: Queryable, workspaceId: string, id: string): Promise<Session | null> {
  const result = await db.query(`select * from sessions where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapSession(result.rows[0]) : null;
}

export async function listSessions(db: Queryable, workspaceId: string, page: { after?: string | undefined; limit: number }): Promise<Session[]> {
  const result = await db.query(`select * from sessions where workspace_id = $1 and ($2::text is null or id > $2) order by id limit $3`, [workspaceId, page.after ?? null, page.limit]);
  return result.rows.map(mapSession);
}
