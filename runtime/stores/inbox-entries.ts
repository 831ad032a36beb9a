import { toIso, type Queryable } from '../db/index.js';

export type EntryStatus = 'pending' | 'assigned' | 'incorporated' | 'completed' | 'failed' | 'withdrawn';

export interface InboxEntry {
  id: string;
  workspace_id: string;
  thread_id: string;
  kind: string;
  delivery: 'queue' | 'steer';
  status: EntryStatus;
  position: number;
  payload: Record<string, unknown>;
  options: Record<string, unknown>;
  agent_id: string;
  agent_revision_id: string | null;
  principal_id: string | null;
  origin_run_id: string | null;
  assigned_run_id: string | null;
  child_run_id: string | null;
  incorporated_checkpoint_seq: number | null;
  failure: { code: string; message: string } | null;
  request_key: string | null;
  created_at: string;
  finished_at: string | null;
  version: number;
}

export const mapEntry = (row: Record<string, unknown>): InboxEntry => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  thread_id: row.thread_id as string,
  kind: row.kind as string,
  delivery: row.delivery as InboxEntry['delivery'],
  status: row.status as EntryStatus,
  position: row.position as number,
  payload: row.payload as Record<string, unknown>,
  options: row.options as Record<string, unknown>,
  agent_id: row.agent_id as string,
  agent_revision_id: (row.agent_revision_id as string | null) ?? null,
  principal_id: (row.principal_id as string | null) ?? null,
  origin_run_id: (row.origin_run_id as string | null) ?? null,
  assigned_run_id: (row.assigned_run_id as string | null) ?? null,
  child_run_id: (row.child_run_id as string | null) ?? null,
  incorporated_checkpoint_seq: (row.incorporated_checkpoint_seq as number | null) ?? null,
  failure: (row.failure as InboxEntry['failure']) ?? null,
  request_key: (row.request_key as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  finished_at: toIso(row.finished_at),
  version: row.version as number,
});

/** The API view (spec 2.6); the version only forms the ETag. */
export function entryView(entry: InboxEntry): Omit<InboxEntry, 'version' | 'workspace_id'> {
  const { version: _v, workspace_id: _w, ...view } = entry;
  return view;
}

export async function insertEntry(
  db: Queryable,
  row: Pick<InboxEntry, 'id' | 'workspace_id' | 'thread_id' | 'kind' | 'delivery' | 'position' | 'payload' | 'options' | 'agent_id' | 'agent_revision_id' | 'principal_id' | 'origin_run_id' | 'request_key'> & {
    /** Set when the entry starts a run in the same transaction: it is born assigned to it. */
    assigned_run_id?: string;
    /** The child run a subagent call's entry starts (its origin_run_id is the parent). */
    child_run_id?: string;
  },
): Promise<InboxEntry> {
  const result = await db.query(
    `insert into inbox_entries (id, workspace_id, thread_id, kind, delivery, status, position, payload, options, agent_id, agent_revision_id, principal_id, origin_run_id, request_key, assigned_run_id, child_run_id)
     values ($1, $2, $3, $4, $5, case when $14::text is null then 'pending' else 'assigned' end, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) returning *`,
    [row.id, row.workspace_id, row.thread_id, row.kind, row.delivery, row.position, JSON.stringify(row.payload), JSON.stringify(row.options), row.agent_id, row.agent_revision_id, row.principal_id, row.origin_run_id, row.request_key, row.assigned_run_id ?? null, row.child_run_id ?? null],
  );
  return mapEntry(result.rows[0]);
}

export async function getEntry(db: Queryable, workspaceId: string, id: string): Promise<InboxEntry | null> {
  const result = await db.query(`select * from inbox_entries where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapEntry(result.rows[0]) : null;
}

export async function getEntriesByIds(db: Queryable, workspaceId: string, ids: string[]): Promise<InboxEntry[]> {
  const result = await db.query(`select * from inbox_entries where workspace_id = $1 and id = any($2::text[])`, [workspaceId, ids]);
  return result.rows.map(mapEntry);
}

export async function listEntries(db: Queryable, threadId: string, page: { afterPosition?: number | undefined; limit: number }): Promise<InboxEntry[]> {
  const result = await db.query(
    `select * from inbox_entries where thread_id = $1 and ($2::int is null or position > $2) order by position limit $3`,
    [threadId, page.afterPosition ?? null, page.limit],
  );
  return result.rows.map(mapEntry);
}

/** The pending entry with the lowest position: queued inputs start in position order. */
export async function firstPendingEntry(db: Queryable, threadId: string, except: readonly string[] = []): Promise<InboxEntry | null> {
  // `except`: entries a statement issued later in the same transaction takes (a final step's incorporated steer entries).
  const result = except.length === 0
    ? await db.query(`select * from inbox_entries where thread_id = $1 and status = 'pending' order by position limit 1`, [threadId])
    : await db.query(`select * from inbox_entries where thread_id = $1 and status = 'pending' and id <> all($2::text[]) order by position limit 1`, [threadId, except]);
  return result.rows[0] ? mapEntry(result.rows[0]) : null;
}

/** Pending steer entries of a thread, in position order (handed to the running attempt). */
export async function pendingSteerEntries(db: Queryable, threadId: string): Promise<InboxEntry[]> {
  const result = await db.query(`select * from inbox_entries where thread_id = $1 and status = 'pending' and delivery = 'steer' order by position`, [threadId]);
  return result.rows.map(mapEntry);
}

export async function updateEntry(
  db: Queryable,
  id: string,
  change: { status: EntryStatus; assigned_run_id?: string; incorporated_checkpoint_seq?: number; failure?: { code: string; message: string }; finished?: boolean },
): Promise<InboxEntry> {
  const result = await db.query(
    `update inbox_entries set version = version + 1, status = $2, assigned_run_id = coalesce($3, assigned_run_id),
        incorporated_checkpoint_seq = coalesce($4, incorporated_checkpoint_seq), failure = coalesce($5, failure),
        finished_at = case when $6 then coalesce(finished_at, now()) else finished_at end
      where id = $1 returning *`,
    [id, change.status, change.assigned_run_id ?? null, change.incorporated_checkpoint_seq ?? null, change.failure ? JSON.stringify(change.failure) : null, change.finished === true],
  );
  return mapEntry(result.rows[0]);
}

/** Marks steer entries incorporated by a checkpoint, only while still pending and on that thread. */
export async function markIncorporated(db: Queryable, threadId: string, ids: string[], runId: string, seq: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const result = await db.query<{ id: string }>(
    `update inbox_entries set version = version + 1, status = 'incorporated', assigned_run_id = $3, incorporated_checkpoint_seq = $4, finished_at = now()
      where thread_id = $1 and id = any($2::text[]) and status = 'pending' returning id`,
    [threadId, ids, runId, seq],
  );
  return result.rows.map((r) => r.id);
}

/** Entries by id for message-authors (spec 2.11), within the session. */
export async function entriesOfSession(db: Queryable, workspaceId: string, sessionId: string, ids: string[]): Promise<InboxEntry[]> {
  const result = await db.query(
    `select e.* from inbox_entries e join threads t on t.id = e.thread_id
      where e.workspace_id = $1 and t.session_id = $2 and e.id = any($3::text[]) order by e.created_at, e.id`,
    [workspaceId, sessionId, ids],
  );
  return result.rows.map(mapEntry);
}
