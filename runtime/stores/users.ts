import { noteChange, toIso, type Queryable } from '../db/index.js';

export interface User {
  id: string;
  organization_id: string;
  email: string;
  name: string;
  image_url: string;
  organization_role: 'admin' | 'member';
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface UserWithSecret extends User {
  password_hash: string | null;
}

const mapUser = (row: Record<string, unknown>): UserWithSecret => ({
  id: row.id as string,
  organization_id: row.organization_id as string,
  email: row.email as string,
  name: row.name as string,
  image_url: row.image_url as string,
  organization_role: row.organization_role as User['organization_role'],
  disabled_at: toIso(row.disabled_at),
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
  password_hash: (row.password_hash as string | null) ?? null,
});

/** The view without the password hash. */
export function publicUser(user: UserWithSecret): User {
  const { password_hash: _hidden, ...rest } = user;
  return rest;
}

export async function insertUser(
  db: Queryable,
  row: { id: string; organization_id: string; email: string; name?: string; password_hash: string | null; organization_role: User['organization_role'] },
): Promise<UserWithSecret> {
  const result = await db.query(
    `insert into users (id, organization_id, email, name, password_hash, organization_role) values ($1, $2, $3, $4, $5, $6) returning *`,
    [row.id, row.organization_id, row.email, row.name ?? '', row.password_hash, row.organization_role],
  );
  return mapUser(result.rows[0]);
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserWithSecret | null> {
  const result = await db.query(`select * from users where lower(email) = lower($1)`, [email]);
  return result.rows[0] ? mapUser(result.rows[0]) : null;
}

export async function getUser(db: Queryable, id: string): Promise<UserWithSecret | null> {
  const result = await db.query(`select * from users where id = $1`, [id]);
  return result.rows[0] ? mapUser(result.rows[0]) : null;
}

/**
 * Disabling only stamps disabled_at: memberships, API keys and sessions stay as they were, and
 * every credential check refuses a disabled user, so enabling restores exactly what it had.
 * Returns false when the user was already in the requested state (no change, no version bump).
 */
export async function setUserDisabled(db: Queryable, id: string, disabled: boolean): Promise<boolean> {
  const result = await db.query(
    disabled
      ? `update users set disabled_at = now(), updated_at = now(), version = version + 1 where id = $1 and disabled_at is null`
      : `update users set disabled_at = null, updated_at = now(), version = version + 1 where id = $1 and disabled_at is not null`,
    [id],
  );
  // Cached credentials of this user (its sessions, the keys it created) are dropped.
  noteChange(db, { kind: 'user', id });
  return (result.rowCount ?? 0) > 0;
}

/** Replaces the password hash (password reset through a mail link). */
export async function setUserPassword(db: Queryable, id: string, passwordHash: string): Promise<void> {
  await db.query(`update users set password_hash = $2, updated_at = now(), version = version + 1 where id = $1`, [id, passwordHash]);
  noteChange(db, { kind: 'user', id });
}
