import { toIso, type Queryable } from '../db/index.js';
import { ID_PREFIX, newId } from '../ids/index.js';

export interface AuditEvent {
  id: string;
  workspace_id: string;
  actor_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string;
  request_id: string | null;
  changes: Record<string, unknown>;
  created_at: string;
}

const mapAuditEvent = (row: Record<string, unknown>): AuditEvent => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  actor_id: (row.actor_id as string | null) ?? null,
  action: row.action as string,
  resource_type: row.resource_type as string,
  resource_id: row.resource_id as string,
  request_id: (row.request_id as string | null) ?? null,
  changes: row.changes as Record<string, unknown>,
  created_at: toIso(row.created_at)!,
});

/**
 * Written in the transaction of the change it records. `changes` must never carry secrets:
 * callers pass views (which never contain credentials), not request bodies.
 */
export async function insertAuditEvent(
  db: Queryable,
  event: { workspace_id: string; actor_id: string | null; action: string; resource_type: string; resource_id: string; request_id?: string | null; changes?: Record<string, unknown> },
): Promise<void> {
  await db.query(
    `insert into audit_events (id, workspace_id, actor_id, action, resource_type, resource_id, request_id, changes)
     values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [newId(ID_PREFIX.auditEvent), event.workspace_id, event.actor_id, event.action, event.resource_type, event.resource_id, event.request_id ?? null, JSON.stringify(event.changes ?? {})],
  );
}

export async function listAuditEvents(
  db: Queryable,
  workspaceId: string,
  filter: { resource_type?: string | undefined; resource_id?: string | undefined; before?: string | undefined; limit: number },
): Promise<AuditEvent[]> {
  const result = await db.query(
    `select * from audit_events
      where workspace_id = $1 and ($2::text is null or resource_type = $2) and ($3::text is null or resource_id = $3)
        and ($4::text is null or id < $4)
      order by id desc limit $5`,
    [workspaceId, filter.resource_type ?? null, filter.resource_id ?? null, filter.before ?? null, filter.limit],
  );
  return result.rows.map(mapAuditEvent);
}
