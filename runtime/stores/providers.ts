import { noteChange, toIso, type Queryable } from '../db/index.js';

// The providers table. Views never carry the credential: the encrypted tokens are read only
// through getProviderWithCredential, by code that is about to decrypt them for an outbound
// call or to compare a PATCH against them.

export type ProviderKindName = 'model' | 'web' | 'environment' | 'connector' | 'memory';

/** The provider view (spec 2.13): the credential is reported only as `credential_configured`. */
export interface Provider {
  id: string;
  workspace_id: string;
  kind: ProviderKindName;
  type: string;
  name: string;
  config: Record<string, unknown>;
  enabled: boolean;
  credential_configured: boolean;
  created_by_id: string | null;
  updated_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A stored credential: one key-ring token per credential field. */
export type EncryptedCredential = Record<string, string>;

export interface ProviderWithCredential {
  provider: Provider;
  credential: EncryptedCredential | null;
}

const mapProvider = (row: Record<string, unknown>): Provider => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  kind: row.kind as ProviderKindName,
  type: row.type as string,
  name: row.name as string,
  config: row.config as Record<string, unknown>,
  enabled: row.enabled as boolean,
  credential_configured: row.credential !== null && row.credential !== undefined,
  created_by_id: (row.created_by_id as string | null) ?? null,
  updated_by_id: (row.updated_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

export async function insertProvider(
  db: Queryable,
  row: { id: string; workspace_id: string; kind: ProviderKindName; type: string; name: string; config: Record<string, unknown>; credential: EncryptedCredential | null; enabled: boolean; actor_id: string | null },
): Promise<Provider> {
  const result = await db.query(
    `insert into providers (id, workspace_id, kind, type, name, config, credential, enabled, created_by_id, updated_by_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) returning *`,
    [row.id, row.workspace_id, row.kind, row.type, row.name, JSON.stringify(row.config), row.credential === null ? null : JSON.stringify(row.credential), row.enabled, row.actor_id],
  );
  return mapProvider(result.rows[0]);
}

/**
 * A provider of the workspace (null when absent; another workspace's provider is absent too).
 * With `kind`, a provider of another kind is absent as well: each kind is its own collection.
 */
export async function getProvider(db: Queryable, workspaceId: string, id: string, kind?: ProviderKindName): Promise<Provider | null> {
  const found = await getProviderWithCredential(db, workspaceId, id, kind);
  return found ? found.provider : null;
}

export async function getProviderWithCredential(db: Queryable, workspaceId: string, id: string, kind?: ProviderKindName): Promise<ProviderWithCredential | null> {
  const result = await db.query(
    `select * from providers where workspace_id = $1 and id = $2 and ($3::text is null or kind = $3)`,
    [workspaceId, id, kind ?? null],
  );
  const row = result.rows[0];
  if (!row) return null;
  return { provider: mapProvider(row), credential: (row.credential as EncryptedCredential | null) ?? null };
}

/**
 * The workspace's first enabled provider of `kind` in creation (id) order, with its sealed
 * credential; null when it has none. The default web provider of a run that names none.
 */
export async function firstEnabledProviderWithCredential(db: Queryable, workspaceId: string, kind: ProviderKindName): Promise<ProviderWithCredential | null> {
  const result = await db.query(`select * from providers where workspace_id = $1 and kind = $2 and enabled order by id limit 1`, [workspaceId, kind]);
  const row = result.rows[0];
  if (!row) return null;
  return { provider: mapProvider(row), credential: (row.credential as EncryptedCredential | null) ?? null };
}

/** One page of a kind's collection in id (creation) order, after the cursor id. */
export async function listProviders(db: Queryable, workspaceId: string, kind: ProviderKindName, page: { limit: number; after?: string | undefined }): Promise<Provider[]> {
  const result = await db.query(
    `select * from providers where workspace_id = $1 and kind = $2 and ($3::text is null or id > $3) order by id limit $4`,
    [workspaceId, kind, page.after ?? null, page.limit],
  );
  return result.rows.map(mapProvider);
}

/** Fields a PATCH changes; `credential` null removes the stored credential. */
export interface ProviderChanges {
  name?: string;
  config?: Record<string, unknown>;
  enabled?: boolean;
  credential?: EncryptedCredential | null;
}

/**
 * Applies changes and increments the version, only if the row is still at `version`
 * (optimistic concurrency: `and version = $3`); null when it moved on meanwhile (or vanished).
 * Callers pass only real changes, so a no-op PATCH never reaches here and keeps its version.
 */
export async function updateProvider(
  db: Queryable,
  target: { workspace_id: string; id: string; version: number; actor_id: string | null },
  changes: ProviderChanges,
): Promise<Provider | null> {
  const hasCredential = Object.hasOwn(changes, 'credential');
  const result = await db.query(
    `update providers
        set name = coalesce($4, name),
            config = coalesce($5::jsonb, config),
            enabled = coalesce($6, enabled),
            credential = case when $7 then $8::jsonb else credential end,
            updated_by_id = $9, updated_at = now(), version = version + 1
      where workspace_id = $1 and id = $2 and version = $3
      returning *`,
    [
      target.workspace_id,
      target.id,
      target.version,
      changes.name ?? null,
      changes.config === undefined ? null : JSON.stringify(changes.config),
      changes.enabled ?? null,
      hasCredential,
      changes.credential ? JSON.stringify(changes.credential) : null,
      target.actor_id,
    ],
  );
  noteChange(db, { kind: 'provider', id: target.id });
  return result.rows[0] ? mapProvider(result.rows[0]) : null;
}

/** The provider and its stored credential, row-locked until the caller's transaction ends. */
export async function lockProviderWithCredential(tx: Queryable, workspaceId: string, id: string): Promise<ProviderWithCredential | null> {
  const result = await tx.query(`select * from providers where workspace_id = $1 and id = $2 for update`, [workspaceId, id]);
  const row = result.rows[0];
  if (!row) return null;
  return { provider: mapProvider(row), credential: (row.credential as EncryptedCredential | null) ?? null };
}

/**
 * Stores a credential the service itself renewed (an OAuth token pair after a refresh). The view
 * does not change (credentials are write-only), so neither do version and updated_*: a client's
 * If-Match stays valid. Caller holds the row lock (lockProviderWithCredential).
 */
export async function replaceRenewedCredential(tx: Queryable, workspaceId: string, id: string, credential: EncryptedCredential): Promise<void> {
  await tx.query(`update providers set credential = $3::jsonb where workspace_id = $1 and id = $2`, [workspaceId, id, JSON.stringify(credential)]);
  noteChange(tx, { kind: 'provider', id });
}
