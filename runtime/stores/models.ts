import { noteChange, toIso, type Queryable } from '../db/index.js';

// The models table. A model is identified by its key within the workspace (spec 2.1): the
// key never changes, and a model view has no id.

export interface Model {
  workspace_id: string;
  key: string;
  provider_id: string;
  model: string;
  api: string;
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
  api: row.api as string,
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

/** The fields a client sets; everything but `key` may change later. */
export interface ModelFields {
  provider_id: string;
  model: string;
  api: string;
  display_name: string;
  characteristics: Record<string, unknown>;
  settings: Record<string, unknown>;
  enabled: boolean;
}

/**
 * Inserts a model. The primary key (workspace_id, key) makes a duplicate key fail with a
 * unique violation, which the caller turns into 409 conflict; the composite foreign key
 * refuses a provider of another workspace.
 */
export async function insertModel(db: Queryable, row: ModelFields & { workspace_id: string; key: string; actor_id: string | null }): Promise<Model> {
  const result = await db.query(
    `insert into models (workspace_id, key, provider_id, model, api, display_name, characteristics, settings, enabled, created_by_id, updated_by_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) returning *`,
    [row.workspace_id, row.key, row.provider_id, row.model, row.api, row.display_name, JSON.stringify(row.characteristics), JSON.stringify(row.settings), row.enabled, row.actor_id],
  );
  return mapModel(result.rows[0]);
}

/** One page of the workspace's models in key order, after the cursor key. */
export async function listModels(db: Queryable, workspaceId: string, page: { limit: number; after?: string | undefined }): Promise<Model[]> {
  const result = await db.query(
    `select * from models where workspace_id = $1 and ($2::text is null or key > $2) order by key limit $3`,
    [workspaceId, page.after ?? null, page.limit],
  );
  return result.rows.map(mapModel);
}

/**
 * Replaces the changeable fields and increments the version, only if the row is still at
 * `version` (optimistic concurrency: `and version = $3`); null when it moved on meanwhile.
 * Callers pass only real changes, so a no-op PATCH keeps its version.
 */
export async function updateModel(
  db: Queryable,
  target: { workspace_id: string; key: string; version: number; actor_id: string | null },
  fields: ModelFields,
): Promise<Model | null> {
  const result = await db.query(
    `update models
        set provider_id = $4, model = $5, api = $6, display_name = $7, characteristics = $8, settings = $9, enabled = $10,
            updated_by_id = $11, updated_at = now(), version = version + 1
      where workspace_id = $1 and key = $2 and version = $3
      returning *`,
    [target.workspace_id, target.key, target.version, fields.provider_id, fields.model, fields.api, fields.display_name, JSON.stringify(fields.characteristics), JSON.stringify(fields.settings), fields.enabled, target.actor_id],
  );
  noteChange(db, { kind: 'model', id: `${target.workspace_id}:${target.key}` });
  return result.rows[0] ? mapModel(result.rows[0]) : null;
}
