import { toIso, type Queryable } from '../db/index.js';
import { historyAfter, JsonArrayText, type HistoryPrefix, type JsonArray } from '../http/index.js';

export interface Thread {
  id: string;
  workspace_id: string;
  session_id: string;
  labels: Record<string, string>;
  current_run_id: string | null;
  last_run_id: string | null;
  origin: string;
  origin_run_id: string | null;
  origin_thread_id: string | null;
  origin_tool_call_id: string | null;
  subagent: string | null;
  mcp_headers: Record<string, Record<string, string>>;
  message_history: Array<Record<string, unknown>>;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/**
 * A thread as the thread actor's lock and update statements read it: every column but
 * message_history, and the history's length (message_count, kept by a trigger, migration 0017).
 * The history is the one column that grows without bound (1.1 MB at 2,000 messages); the actor
 * locks the row for every operation and none but fork and the attempt's start read the history,
 * so those statements leave it in the table (bench/RESULTS.md, lever 5).
 */
export interface ThreadState extends Omit<Thread, 'message_history'> {
  message_count: number;
  next_position: number;
}

/** The whole row, history included (GET /threads/{id}, the responses that carry a thread, fork, the attempt's start). */
export interface ThreadRow extends ThreadState {
  message_history: Array<Record<string, unknown>>;
}

/** The select list of ThreadState: every column but message_history. */
export const STATE_COLUMNS = `id, workspace_id, session_id, labels, current_run_id, last_run_id, origin, origin_run_id, origin_thread_id,
  origin_tool_call_id, subagent, mcp_headers, message_count, archived_at, created_at, updated_at, version, next_position`;

/** STATE_COLUMNS qualified by the alias `t` (a statement whose other relations share column names). */
export const T_STATE_COLUMNS = STATE_COLUMNS.split(',').map((c) => `t.${c.trim()}`).join(', ');

export const mapThreadState = (row: Record<string, unknown>): ThreadState => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  session_id: row.session_id as string,
  labels: row.labels as Record<string, string>,
  current_run_id: (row.current_run_id as string | null) ?? null,
  last_run_id: (row.last_run_id as string | null) ?? null,
  origin: row.origin as string,
  origin_run_id: (row.origin_run_id as string | null) ?? null,
  origin_thread_id: (row.origin_thread_id as string | null) ?? null,
  origin_tool_call_id: (row.origin_tool_call_id as string | null) ?? null,
  subagent: (row.subagent as string | null) ?? null,
  mcp_headers: row.mcp_headers as Record<string, Record<string, string>>,
  message_count: row.message_count as number,
  archived_at: toIso(row.archived_at),
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
  next_position: row.next_position as number,
});

export const mapThread = (row: Record<string, unknown>): ThreadRow => ({
  ...mapThreadState(row),
  message_history: row.message_history as Array<Record<string, unknown>>,
});

/** A thread whose history may still be PostgreSQL's text (JsonArrayText): what responses carry. */
export type ThreadWithHistory = Omit<ThreadRow, 'message_history'> & { message_history: JsonArray };

/** The API view (the position counter is internal; the spec's thread has no message_count). */
export function threadView(thread: ThreadRow): Thread;
export function threadView(thread: ThreadWithHistory): Omit<Thread, 'message_history'> & { message_history: JsonArray };
export function threadView(thread: ThreadWithHistory): Omit<Thread, 'message_history'> & { message_history: JsonArray } {
  const { next_position: _internal, message_count: _count, ...view } = thread;
  return view;
}

/**
 * SQL: the history `history` of `count` messages as text after the first `known` messages a
 * process holds (runtime/cache HistoryPrefixes; 0: none) — the messages after them, null when
 * they are the whole history, the whole history when none are held. historyAfter joins it back.
 * Printing only the rest is the point: a long history printed whole is what it costs (~13 ms of
 * PostgreSQL at 2,000 messages).
 */
export function historyAfterSql(history: string, count: string, known: string): string {
  return `(case when ${known} > 0 and ${count} = ${known} then null
      when ${known} > 0 and ${count} > ${known} then jsonb_path_query_array(${history}, '$[$n to last]', jsonb_build_object('n', ${known}))::text
      else ${history}::text end)`;
}

/** A thread whose history is PostgreSQL's text (JsonArrayText), as responses carry it. */
export type ThreadForView = ThreadState & { message_history: JsonArrayText };

const mapThreadForView = (row: Record<string, unknown>, prefix?: HistoryPrefix): ThreadForView => {
  const state = mapThreadState(row);
  return { ...state, message_history: historyAfter(prefix, row.history_text as string | null, state.message_count) };
};

/**
 * The whole thread for a response (GET, and the thread operations' answers): see JsonArrayText.
 * With a prefix of its history held (runtime/cache HistoryPrefixes), only what follows is read.
 */
export async function getThreadForView(db: Queryable, workspaceId: string, id: string, prefix?: HistoryPrefix): Promise<ThreadForView | null> {
  const result = await db.query(
    `select ${STATE_COLUMNS}, ${historyAfterSql('message_history', 'message_count', '$3::int')} as history_text from threads where workspace_id = $1 and id = $2`,
    [workspaceId, id, prefix?.count ?? 0],
  );
  return result.rows[0] ? mapThreadForView(result.rows[0], prefix) : null;
}

/** The history of a thread as PostgreSQL's text, for an attempt to parse on its own thread (see getThreadForView). */
export async function getThreadHistoryText(db: Queryable, workspaceId: string, id: string, prefix?: HistoryPrefix): Promise<JsonArrayText | null> {
  return (await getThreadForView(db, workspaceId, id, prefix))?.message_history ?? null;
}

/** The thread as a thread.changed stream event carries it: the view without the history, with its length. */
export type ThreadEventView = Omit<Thread, 'message_history'> & { message_count: number };

export function threadEventView(thread: ThreadState): ThreadEventView {
  // A full ThreadRow passed here must not carry its history into the event.
  const { next_position: _internal, message_history: _history, ...view } = thread as ThreadState & { message_history?: unknown };
  return view;
}

export async function insertThread(
  db: Queryable,
  row: {
    id: string;
    workspace_id: string;
    session_id: string;
    labels: Record<string, string>;
    origin?: string;
    origin_run_id?: string | null;
    origin_thread_id?: string | null;
    origin_tool_call_id?: string | null;
    subagent?: string | null;
    message_history?: unknown[];
    /** Per connection id, headers sent to that connection's MCP server (spec 2.7). */
    mcp_headers?: Record<string, Record<string, string>>;
  },
): Promise<ThreadState> {
  // Returns the state, not the history it was just given (a fork's copy can be large).
  const result = await db.query(
    `insert into threads (id, workspace_id, session_id, labels, origin, origin_run_id, origin_thread_id, origin_tool_call_id, subagent, message_history, mcp_headers)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) returning ${STATE_COLUMNS}`,
    [row.id, row.workspace_id, row.session_id, JSON.stringify(row.labels), row.origin ?? 'new', row.origin_run_id ?? null, row.origin_thread_id ?? null, row.origin_tool_call_id ?? null, row.subagent ?? null, JSON.stringify(row.message_history ?? []), JSON.stringify(row.mcp_headers ?? {})],
  );
  return mapThreadState(result.rows[0]);
}

/** The child threads a run started for its subagent calls (origin subagent), oldest first. */
export async function subagentThreadsOf(db: Queryable, workspaceId: string, runId: string): Promise<ThreadState[]> {
  const result = await db.query(`select ${STATE_COLUMNS} from threads where workspace_id = $1 and origin_run_id = $2 and origin = 'subagent' order by created_at, id`, [workspaceId, runId]);
  return result.rows.map(mapThreadState);
}

export async function getThread(db: Queryable, workspaceId: string, id: string): Promise<ThreadRow | null> {
  const result = await db.query(`select * from threads where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapThread(result.rows[0]) : null;
}

/** The thread without its history (stream access, the attempt's connections: they need neither). */
export async function getThreadState(db: Queryable, workspaceId: string, id: string): Promise<ThreadState | null> {
  const result = await db.query(`select ${STATE_COLUMNS} from threads where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapThreadState(result.rows[0]) : null;
}

/**
 * Locks the thread row for the rest of the transaction. Every write to a thread's inbox, its
 * current run and its history happens under this lock (the thread actor's single-writer
 * rule across processes): two processes never interleave writes to one thread. `for update`
 * locks the whole row whatever the select list: leaving message_history out changes what is
 * read, not what is locked. A caller that needs the history reads it with getThread.
 */
export async function lockThread(db: Queryable, workspaceId: string, id: string): Promise<ThreadState | null> {
  const result = await db.query(`select ${STATE_COLUMNS} from threads where workspace_id = $1 and id = $2 for update`, [workspaceId, id]);
  return result.rows[0] ? mapThreadState(result.rows[0]) : null;
}

export async function listThreads(db: Queryable, workspaceId: string, sessionId: string, page: { after?: string | undefined; limit: number }): Promise<ThreadForView[]> {
  const result = await db.query(
    `select ${STATE_COLUMNS}, message_history::text as history_text from threads where workspace_id = $1 and session_id = $2 and ($3::text is null or id > $3) order by id limit $4`,
    [workspaceId, sessionId, page.after ?? null, page.limit],
  );
  return result.rows.map((row) => mapThreadForView(row));
}

/**
 * Locks the thread row and takes its next inbox position in one statement (the UPDATE takes
 * the same row lock lockThread does; the returning list, without message_history, does not
 * change which row is locked). Returns the thread as it is after the increment, and the
 * position taken; null when the thread is missing or in another workspace.
 */
export async function lockThreadTakingPosition(db: Queryable, workspaceId: string, id: string): Promise<{ thread: ThreadState; position: number } | null> {
  const result = await db.query(`update threads set next_position = next_position + 1 where workspace_id = $1 and id = $2 returning ${STATE_COLUMNS}`, [workspaceId, id]);
  if (!result.rows[0]) return null;
  const thread = mapThreadState(result.rows[0]);
  return { thread, position: thread.next_position - 1 };
}

/** Takes `count` consecutive inbox positions (caller holds the thread lock). */
export async function takePositions(db: Queryable, threadId: string, count: number): Promise<number> {
  const result = await db.query<{ first: number }>(
    `update threads set next_position = next_position + $2 where id = $1 returning next_position - $2 as first`,
    [threadId, count],
  );
  return result.rows[0]!.first;
}

/**
 * Sets which run holds the thread (caller holds the thread lock); returns the thread after.
 * `append`: a sealed run's messages joining the conversation in the same statement (as
 * appendThreadHistory would; the trigger of migration 0017 moves message_count with them).
 */
export async function setThreadRuns(db: Queryable, threadId: string, current: string | null, last?: string, append: unknown[] = []): Promise<ThreadState> {
  const result = append.length === 0
    ? await db.query(
        `update threads set current_run_id = $2, last_run_id = coalesce($3, last_run_id), updated_at = now(), version = version + 1 where id = $1 returning ${STATE_COLUMNS}`,
        [threadId, current, last ?? null],
      )
    : await db.query(
        `update threads set message_history = message_history || $4::jsonb, current_run_id = $2, last_run_id = coalesce($3, last_run_id), updated_at = now(), version = version + 1
          where id = $1 returning ${STATE_COLUMNS}`,
        [threadId, current, last ?? null, JSON.stringify(append)],
      );
  return mapThreadState(result.rows[0]);
}

/**
 * Appends a sealed run's messages to the thread's conversation (caller holds the thread lock).
 * Nothing is read back; the trigger of migration 0017 moves message_count with the array.
 *
 * Invariant: a thread's message_history is only ever inserted with the thread or appended to
 * (here and setThreadRuns), never rewritten or shortened. Each process's HistoryPrefixes and
 * the Idempotency-Key records (`$history_prefix`) rely on it: a prefix once read stays the
 * history's beginning. A change that rewrites histories (a migration transforming messages)
 * must restart every process and keep stored records' prefixes meaningful.
 */
export async function appendThreadHistory(db: Queryable, threadId: string, messages: unknown[]): Promise<void> {
  if (messages.length === 0) return;
  await db.query(`update threads set message_history = message_history || $2::jsonb where id = $1`, [threadId, JSON.stringify(messages)]);
}

/** advance_threads: idle threads that have pending input, oldest input first (bounded). */
export async function idleThreadsWithPendingInput(db: Queryable, limit: number): Promise<Array<{ workspace_id: string; id: string }>> {
  const result = await db.query<{ workspace_id: string; id: string }>(
    `select t.workspace_id, t.id from threads t
      where t.current_run_id is null
        and exists (select 1 from inbox_entries e where e.thread_id = t.id and e.status = 'pending')
      order by (select min(e.created_at) from inbox_entries e where e.thread_id = t.id and e.status = 'pending')
      limit $1`,
    [limit],
  );
  return result.rows;
}
