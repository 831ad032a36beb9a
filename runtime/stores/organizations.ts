import { toIso, type Queryable } from '../db/index.js';

export interface Organization {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

const mapOrganization = (row: Record<string, unknown>): Organization => ({
  id: row.id as string,
  name: row.name as string,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
});

export async function insertOrganization(db: Queryable, row: { id: string; name: string }): Promise<Organization> {
  const result = await db.query(`insert into organizations (id, name) values ($1, $2) returning *`, [row.id, row.name]);
  return mapOrganization(result.rows[0]);
}

export async function countOrganizations(db: Queryable): Promise<number> {
  const result = await db.query<{ n: number }>(`select count(*)::int as n from organizations`);
  return result.rows[0]?.n ?? 0;
}

export async function getOrganization(db: Queryable, id: string): Promise<Organization | null> {
  const result = await db.query(`select * from organizations where id = $1`, [id]);
  return result.rows[0] ? mapOrganization(result.rows[0]) : null;
}
