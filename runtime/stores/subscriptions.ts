import { noteChange, toIso, type Queryable } from '../db/index.js';

// Webhook subscriptions. Only this module holds SQL for the `subscriptions` table.

export interface Subscription {
  id: string;
  workspace_id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  created_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const mapSubscription = (row: Record<string, unknown>): Subscription => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  url: row.url as string,
  events: row.events as string[],
  description: row.description as string,
  enabled: row.enabled as boolean,
  created_by_id: (row.created_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

// The view never carries the secret; the ciphertext is read only by the sender.
const VIEW = `id, workspace_id, url, events, description, enabled, created_by_id, created_at, updated_at, version`;

export async function insertSubscription(
  db: Queryable,
  row: { id: string; workspace_id: string; url: string; events: string[]; description: string; secret_ciphertext: string; created_by_id: string | null },
): Promise<Subscription> {
  const result = await db.query(
    `insert into subscriptions (id, workspace_id, url, events, description, secret_ciphertext, created_by_id)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${VIEW}`,
    [row.id, row.workspace_id, row.url, row.events, row.description, row.secret_ciphertext, row.created_by_id],
  );
  noteChange(db, { kind: 'subscription', id: row.workspace_id });
  return mapSubscription(result.rows[0]);
}

export async function getSubscription(db: Queryable, workspaceId: string, id: string): Promise<Subscription | null> {
  const result = await db.query(`select ${VIEW} from subscriptions where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapSubscription(result.rows[0]) : null;
}

/** What a webhook delivery needs: the current URL and the encrypted secret. */
export async function getSubscriptionTarget(db: Queryable, workspaceId: string, id: string): Promise<{ url: string; secret_ciphertext: string } | null> {
  const result = await db.query(`select url, secret_ciphertext from subscriptions where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return (result.rows[0] as { url: string; secret_ciphertext: string } | undefined) ?? null;
}

export async function listSubscriptions(db: Queryable, workspaceId: string, page: { after?: string | undefined; limit: number }): Promise<Subscription[]> {
  const result = await db.query(
    `select ${VIEW} from subscriptions where workspace_id = $1 and ($2::text is null or id > $2) order by id limit $3`,
    [workspaceId, page.after ?? null, page.limit],
  );
  return result.rows.map(mapSubscription);
}

/** Every enabled subscription of the workspace with its event filter (the read cache's index). */
export async function listEnabledSubscriptionFilters(db: Queryable, workspaceId: string): Promise<SubscriptionFilter[]> {
  const result = await db.query(`select id, events from subscriptions where workspace_id = $1 and enabled order by id`, [workspaceId]);
  return result.rows.map((r) => ({ id: r.id as string, events: r.events as string[] }));
}

export interface SubscriptionFilter {
  id: string;
  events: string[];
}

export interface SubscriptionChanges {
  url?: string | undefined;
  events?: string[] | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
}

/** Applies the changes if the version still matches (optimistic concurrency); null otherwise. */
export async function updateSubscription(db: Queryable, workspaceId: string, id: string, version: number, changes: SubscriptionChanges): Promise<Subscription | null> {
  const result = await db.query(
    `update subscriptions set url = coalesce($4, url), events = coalesce($5, events), description = coalesce($6, description),
            enabled = coalesce($7, enabled), updated_at = now(), version = version + 1
      where workspace_id = $1 and id = $2 and version = $3 returning ${VIEW}`,
    [workspaceId, id, version, changes.url ?? null, changes.events ?? null, changes.description ?? null, changes.enabled ?? null],
  );
  if (result.rows[0]) noteChange(db, { kind: 'subscription', id: workspaceId });
  return result.rows[0] ? mapSubscription(result.rows[0]) : null;
}

/** Deletes the subscription (its deliveries go with it, by foreign key); returns the final view. */
export async function deleteSubscription(db: Queryable, workspaceId: string, id: string): Promise<Subscription | null> {
  const result = await db.query(`delete from subscriptions where workspace_id = $1 and id = $2 returning ${VIEW}`, [workspaceId, id]);
  if (result.rows[0]) noteChange(db, { kind: 'subscription', id: workspaceId });
  return result.rows[0] ? mapSubscription(result.rows[0]) : null;
}
