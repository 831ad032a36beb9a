import { toIso, type Queryable } from '../db/index.js';

export interface RunItem {
  id: string;
  kind: string;
  state: string;
  ordinal: number;
  content: Record<string, unknown>;
  content_refs: Record<string, unknown>;
  first_stream_id: string | null;
  last_stream_id: string | null;
  started_at: string | null;
  ended_at: string | null;
}

export const mapItem = (row: Record<string, unknown>): RunItem => ({
  id: row.id as string,
  kind: row.kind as string,
  state: row.state as string,
  ordinal: row.ordinal as number,
  content: row.content as Record<string, unknown>,
  content_refs: (row.content_refs as Record<string, unknown>) ?? {},
  first_stream_id: (row.first_stream_id as string | null) ?? null,
  last_stream_id: (row.last_stream_id as string | null) ?? null,
  started_at: toIso(row.started_at),
  ended_at: toIso(row.ended_at),
});

/**
 * Inserts a step's committed items (caller's transaction, fenced by the pointer update).
 * The primary key (run_id, ordinal) refuses a second commit of an ordinal: committed items
 * never change again.
 */
/** The insert of a step's items ($1 the run, $2 the items as a JSON array): insertItems, and the seal's `step_items` (seal-release.ts). */
export const INSERT_ITEMS_SELECT = `insert into run_items (run_id, ordinal, id, kind, state, content, content_refs, first_stream_id, last_stream_id, started_at, ended_at)
     select $1, x.ordinal, x.id, x.kind, x.state, x.content, x.content_refs, x.first_stream_id, x.last_stream_id, x.started_at, x.ended_at
       from jsonb_to_recordset($2::jsonb) as x(ordinal int, id text, kind text, state text, content jsonb, content_refs jsonb,
            first_stream_id text, last_stream_id text, started_at timestamptz, ended_at timestamptz)`;

export async function insertItems(db: Queryable, runId: string, items: readonly RunItem[]): Promise<void> {
  if (items.length === 0) return;
  await db.query(INSERT_ITEMS_SELECT, [runId, JSON.stringify(items)]);
}

/** Unpaged committed items in an ordinal range, ascending. */
export async function listItemRows(db: Queryable, runId: string, range: { from: number; to: number }): Promise<RunItem[]> {
  const result = await db.query(`select * from run_items where run_id = $1 and ordinal between $2 and $3 order by ordinal`, [runId, range.from, range.to]);
  return result.rows.map(mapItem);
}

export async function countItemRows(db: Queryable, runId: string): Promise<{ count: number; first: number | null; last: number | null }> {
  const result = await db.query<{ count: number; first: number | null; last: number | null }>(
    `select count(*)::int as count, min(ordinal) as first, max(ordinal) as last from run_items where run_id = $1`,
    [runId],
  );
  return result.rows[0]!;
}

export async function deleteItemRows(db: Queryable, runId: string, range: { from: number; to: number }): Promise<number> {
  const result = await db.query(`delete from run_items where run_id = $1 and ordinal between $2 and $3`, [runId, range.from, range.to]);
  return result.rowCount ?? 0;
}

export interface DisplayPage {
  run_id: string;
  first_ordinal: number;
  last_ordinal: number;
  object_key: string;
  digest: string;
  size_bytes: number;
  item_count: number;
}

export async function insertDisplayPage(db: Queryable, page: DisplayPage): Promise<void> {
  await db.query(
    `insert into run_display_pages (run_id, first_ordinal, last_ordinal, object_key, digest, size_bytes, item_count) values ($1, $2, $3, $4, $5, $6, $7)`,
    [page.run_id, page.first_ordinal, page.last_ordinal, page.object_key, page.digest, page.size_bytes, page.item_count],
  );
}

/** Pages overlapping an ordinal range, ascending. */
export async function listDisplayPages(db: Queryable, runId: string, range: { from: number; to: number }): Promise<DisplayPage[]> {
  const result = await db.query(
    `select * from run_display_pages where run_id = $1 and last_ordinal >= $2 and first_ordinal <= $3 order by first_ordinal`,
    [runId, range.from, range.to],
  );
  return result.rows as DisplayPage[];
}

export async function countDisplayPages(db: Queryable, runId: string): Promise<number> {
  const result = await db.query<{ n: number }>(`select count(*)::int as n from run_display_pages where run_id = $1`, [runId]);
  return result.rows[0]?.n ?? 0;
}
