import { toIso, type Queryable } from '../db/index.js';

export interface Workspace {
  id: string;
  organization_id: string;
  name: string;
  created_by_id: string | null;
  updated_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export const mapWorkspace = (row: Record<string, unknown>): Workspace => ({
  id: row.id as string,
  organization_id: row.organization_id as string,
  name: row.name as string,
  created_by_id: (row.created_by_id as string | null) ?? null,
  updated_by_id: (row.updated_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

export async function insertWorkspace(
  db: Queryable,
  row: { id: string; organization_id: string; name: string; created_by_id: string | null },
): Promise<Workspace> {
  const result = await db.query(
    `insert into workspaces (id, organization_id, name, created_by_id, updated_by_id) values ($1, $2, $3, $4, $4) returning *`,
    [row.id, row.organization_id, row.name, row.created_by_id],
  );
  return mapWorkspace(result.rows[0]);
}

export async function getWorkspace(db: Queryable, id: string): Promise<Workspace | null> {
  const result = await db.query(`select * from workspaces where id = $1`, [id]);
  return result.rows[0] ? mapWorkspace(result.rows[0]) : null;
}

/** Workspaces the user is a member of, oldest first. */
export async function listWorkspacesOfUser(db: Queryable, userId: string): Promise<Array<Workspace & { role: string }>> {
  const result = await db.query(
    `select w.*, m.role from workspaces w join memberships m on m.workspace_id = w.id where m.user_id = $1 order by w.id`,
    [userId],
  );
  return result.rows.map((row) => ({ ...mapWorkspace(row), role: row.role as string }));
}
