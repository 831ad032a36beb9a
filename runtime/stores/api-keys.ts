import { noteChange, toIso, type Queryable } from '../db/index.js';
import type { MemberRole } from './memberships.js';

export interface ApiKey {
  id: string;
  workspace_id: string;
  name: string;
  role: MemberRole;
  secret_hint: string;
  created_by_id: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const mapApiKey = (row: Record<string, unknown>): ApiKey => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  name: row.name as string,
  role: row.role as MemberRole,
  secret_hint: row.secret_hint as string,
  created_by_id: row.created_by_id as string,
  created_at: toIso(row.created_at)!,
  last_used_at: toIso(row.last_used_at),
  revoked_at: toIso(row.revoked_at),
});

export async function insertApiKey(
  db: Queryable,
  row: { id: string; workspace_id: string; name: string; role: MemberRole; secret_hash: Buffer; secret_hint: string; created_by_id: string },
): Promise<ApiKey> {
  const result = await db.query(
    `insert into api_keys (id, workspace_id, name, role, secret_hash, secret_hint, created_by_id)
     values ($1, $2, $3, $4, $5, $6, $7) returning *`,
    [row.id, row.workspace_id, row.name, row.role, row.secret_hash, row.secret_hint, row.created_by_id],
  );
  return mapApiKey(result.rows[0]);
}

export interface ApiKeyCredential {
  key: ApiKey;
  user_disabled: boolean;
  /** The creator's current role in the key's workspace (null when no longer a member). */
  creator_role: MemberRole | null;
  organization_id: string;
}

/**
 * One query per API request: the key by secret hash with its creator's state. Revoked keys
 * are not found; a disabled creator or a creator who left the workspace is reported so the
 * caller refuses the key (re-enabling restores it, since nothing was deleted).
 */
export async function findApiKeyBySecretHash(db: Queryable, secretHash: Buffer): Promise<ApiKeyCredential | null> {
  const result = await db.query(
    `select k.*, u.disabled_at is not null as user_disabled, m.role as creator_role, w.organization_id
       from api_keys k
       join workspaces w on w.id = k.workspace_id
       join users u on u.id = k.created_by_id
       left join memberships m on m.workspace_id = k.workspace_id and m.user_id = k.created_by_id
      where k.secret_hash = $1 and k.revoked_at is null`,
    [secretHash],
  );
  const row = result.rows[0];
  if (!row) return null;
  return { key: mapApiKey(row), user_disabled: row.user_disabled as boolean, creator_role: (row.creator_role as MemberRole | null) ?? null, organization_id: row.organization_id as string };
}

/** Records use at most once a minute per key, so reads do not turn into a write per request. */
export async function touchApiKey(db: Queryable, id: string): Promise<void> {
  await db.query(`update api_keys set last_used_at = now() where id = $1 and (last_used_at is null or last_used_at < now() - interval '60 seconds')`, [id]);
}

export async function listApiKeys(db: Queryable, workspaceId: string, page: { limit: number; after?: string }): Promise<ApiKey[]> {
  const result = await db.query(
    `select * from api_keys where workspace_id = $1 and revoked_at is null and ($2::text is null or id > $2) order by id limit $3`,
    [workspaceId, page.after ?? null, page.limit],
  );
  return result.rows.map(mapApiKey);
}

export async function getApiKey(db: Queryable, workspaceId: string, id: string): Promise<ApiKey | null> {
  const result = await db.query(`select * from api_keys where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapApiKey(result.rows[0]) : null;
}

export async function revokeApiKey(db: Queryable, workspaceId: string, id: string): Promise<ApiKey | null> {
  const result = await db.query(
    `update api_keys set revoked_at = coalesce(revoked_at, now()) where workspace_id = $1 and id = $2 returning *`,
    [workspaceId, id],
  );
  noteChange(db, { kind: 'api_key', id });
  return result.rows[0] ? mapApiKey(result.rows[0]) : null;
}
