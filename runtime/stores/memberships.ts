import { noteChange, toIso, type Queryable } from '../db/index.js';

export const MEMBER_ROLES = ["admin", "member", "viewer"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export interface Membership {
  workspace_id: string;
  user_id: string;
  role: MemberRole;
  created_at: string;
  updated_at: string;
}

const mapMembership = (row: Record<string, unknown>): Membership => ({
  workspace_id: row.workspace_id as string,
  user_id: row.user_id as string,
  role: row.role as MemberRole,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
});

export async function insertMembership(db: Queryable, row: { workspace_id: string; user_id: string; role: MemberRole }): Promise<Membership> {
  const result = await db.query(
    `insert into memberships (workspace_id, user_id, role) values ($1, $2, $3)
     on conflict (workspace_id, user_id) do update set role = excluded.role, updated_at = now() returning *`,
    [row.workspace_id, row.user_id, row.role],
  );
  // A new or changed role changes what the user's sessions and keys may do in this workspace.
  noteChange(db, { kind: 'membership', id: `${row.workspace_id}:${row.user_id}` });
  return mapMembership(result.rows[0]);
}

export async function getMembership(db: Queryable, workspaceId: string, userId: string): Promise<Membership | null> {
  const result = await db.query(`select * from memberships where workspace_id = $1 and user_id = $2`, [workspaceId, userId]);
  return result.rows[0] ? mapMembership(result.rows[0]) : null;
}

export async function listMemberships(db: Queryable, workspaceId: string): Promise<Membership[]> {
  const result = await db.query(`select * from memberships where workspace_id = $1 order by created_at, user_id`, [workspaceId]);
  return result.rows.map(mapMembership);
}
