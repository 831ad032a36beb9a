import type { Queryable } from '../db/index.js';
import { mapWorkspace, type Workspace } from './workspaces.js';

/**
 * Renames a workspace if the version still matches (optimistic concurrency): null when the
 * version moved on. A rename to the same name changes nothing and keeps the version.
 */
export async function updateWorkspaceName(db: Queryable, id: string, version: number, name: string, actorId: string): Promise<Workspace | null> {
  const result = await db.query(
    `update workspaces set name = $3, updated_by_id = $4, updated_at = now(), version = version + 1
      where id = $1 and version = $2 and name is distinct from $3 returning *`,
    [id, version, name, actorId],
  );
  return result.rows[0] ? mapWorkspace(result.rows[0]) : null;
}

export async function listWorkspacesOfOrganizationMember(db: Queryable, userId: string, page: { after?: string | undefined; limit: number }): Promise<Array<Workspace & { role: string }>> {
  const result = await db.query(
    `select w.*, m.role from workspaces w join memberships m on m.workspace_id = w.id
      where m.user_id = $1 and ($2::text is null or w.id > $2) order by w.id limit $3`,
    [userId, page.after ?? null, page.limit],
  );
  return result.rows.map((row) => ({ ...mapWorkspace(row), role: row.role as string }));
}
