import { toIso, type Queryable } from '../db/index.js';

export interface Model {
  workspace_id: string;
  key: string;
  provider_id: string;
  model: string;
  api: string | null;
  display_name: string;
  characteristics: Record<string, unknown>;
  settings: Record<string, unknown>;
  enabled: boolean;
  created_by_id: string | null;
  updated_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export const mapModel = (row: Record<string, unknown>): Model => ({
  workspace_id: row.workspace_id as string,
  key: row.key as string,
  provider_id: row.provider_id as string,
  model: row.model as string,
  api: (row.api as string | null) ?? null,
  display_name: row.display_name as string,
  characteristics: row.characteristics as Record<string, unknown>,
  settings: row.settings as Record<string, unknown>,
  enabled: row.enabled as boolean,
  created_by_id: (row.created_by_id as string | null) ?? null,
  updated_by_id: (row.updated_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

/** A model of the workspace by key (null when absent: another workspace's model is absent too). */
export async function getModel(db: Queryable, workspaceId: string, key: string): Promise<Model | null> {
  const result = await db.query(`select * from models where workspace_id = $1 and key = $2`, [workspaceId, key]);
  return result.rows[0] ? mapModel(result.rows[0]) : null;
}
