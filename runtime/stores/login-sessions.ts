import { noteChange, toIso, type Queryable } from '../db/index.js';

export interface LoginSession {
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
}

export async function insertLoginSession(db: Queryable, row: { id: string; user_id: string; token_hash: Buffer; ttl_seconds: number }): Promise<LoginSession> {
  const result = await db.query(
    `insert into login_sessions (id, user_id, token_hash, expires_at) values ($1, $2, $3, now() + make_interval(secs => $4)) returning *`,
    [row.id, row.user_id, row.token_hash, row.ttl_seconds],
  );
  const r = result.rows[0];
  return { id: r.id, user_id: r.user_id, created_at: toIso(r.created_at)!, expires_at: toIso(r.expires_at)! };
}

export interface SessionCredential {
  session_id: string;
  user_id: string;
  user_disabled: boolean;
  organization_id: string;
  organization_role: 'admin' | 'member';
  /** When the session stops working (a cached credential must not outlive it). */
  expires_at: string;
}

/** A live session (not revoked, not expired) with its user's state. */
export async function findLiveSessionByTokenHash(db: Queryable, tokenHash: Buffer): Promise<SessionCredential | null> {
  const result = await db.query(
    `select s.id as session_id, s.user_id, u.disabled_at is not null as user_disabled, u.organization_id, u.organization_role, s.expires_at
       from login_sessions s join users u on u.id = s.user_id
      where s.token_hash = $1 and s.revoked_at is null and s.expires_at > now()`,
    [tokenHash],
  );
  const row = result.rows[0] as (Omit<SessionCredential, 'expires_at'> & { expires_at: unknown }) | undefined;
  return row ? { ...row, expires_at: toIso(row.expires_at)! } : null;
}

export async function revokeLoginSession(db: Queryable, id: string): Promise<void> {
  await db.query(`update login_sessions set revoked_at = coalesce(revoked_at, now()) where id = $1`, [id]);
  noteChange(db, { kind: 'session', id });
}

/** expire_credentials sweep: deletes expired or revoked sessions, a bounded batch per call. */
export async function deleteDeadLoginSessions(db: Queryable, limit: number): Promise<number> {
  const result = await db.query(
    `delete from login_sessions where id in (
       select id from login_sessions where expires_at <= now() or revoked_at is not null limit $1)`,
    [limit],
  );
  return result.rowCount ?? 0;
}

/** Revokes every live session of a user (after a password reset). */
export async function revokeUserSessions(db: Queryable, userId: string): Promise<void> {
  await db.query(`update login_sessions set revoked_at = now() where user_id = $1 and revoked_at is null`, [userId]);
  noteChange(db, { kind: 'user', id: userId });
}
