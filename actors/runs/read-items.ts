import {
  AppError,
  compareStreamIds,
  getRunById,
  subagentThreadsOf,
  listDisplayPages,
  listItemRows,
  runView,
  type RunItem,
  type RunRow,
  type Services,
  type StreamBus,
  type TailSnapshot,
} from '../../runtime/index.js';
import { decodePage } from '../worker/index.js';

export interface ItemsQuery {
  before?: number | undefined;
  after?: number | undefined;
  limit: number;
}

/**
 * Committed items in [from, to] from display pages and unpaged rows, ascending. The rows are
 * read BEFORE the pages, by two statements with two snapshots: packing (display-pages.ts) swaps
 * rows for a page pointer in one transaction and never removes a page, so a swap committed
 * between the two reads shows its items twice (as rows, then in the page) — never not at all,
 * as reading the pages first (or both at once) could: the page missed, its rows already gone.
 * Committed items never change, so the two copies are equal; one is kept.
 */
async function committedRange(services: Services, runId: string, from: number, to: number): Promise<RunItem[]> {
  if (to < from) return [];
  const rows = await listItemRows(services.pool, runId, { from, to });
  // Every item in [from, to] is in one of the rows or one of the pages read now.
  const pages = rows.length === to - from + 1 ? [] : await listDisplayPages(services.pool, runId, { from, to });
  const byOrdinal = new Map<number, RunItem>();
  for (const page of pages) {
    const bytes = await services.objects.get(page.object_key);
    if (!bytes) throw new AppError('unavailable', 'a display page of this run is missing from the object store');
    for (const item of await decodePage(bytes, page.digest)) if (item.ordinal >= from && item.ordinal <= to) byOrdinal.set(item.ordinal, item);
  }
  for (const row of rows) byOrdinal.set(row.ordinal, row);
  return [...byOrdinal.values()].sort((a, b) => a.ordinal - b.ordinal);
}

/**
 * What an unsealed run's page needs from the live side, read in this order: the stream's end,
 * then the tail snapshot, then the run row again. The snapshot is anchored before an attempt
 * publishes anything, so "no snapshot" (or a run still accepted when read last) means no tail
 * event of the current attempt was in the stream when its end was read. The row read last
 * counts every item committed before the snapshot was read (the snapshot drops committed
 * items), so nothing falls between committed rows and the tail.
 */
async function readLive(services: Services, bus: StreamBus, run: RunRow): Promise<{ streamEnd: string | null; tail: TailSnapshot | null; run: RunRow }> {
  const streamEnd = await bus.lastId(run.thread_id).then((id) => id ?? '0-0', () => null);
  const tail = streamEnd === null ? null : await bus.getTail(run.id);
  return { streamEnd, tail, run: (await getRunById(services.pool, run.id)) ?? run };
}

function newestStreamId(items: RunItem[]): string | null {
  let newest: string | null = null;
  for (const item of items) if (item.last_stream_id && (newest === null || compareStreamIds(item.last_stream_id, newest) > 0)) newest = item.last_stream_id;
  return newest;
}

/**
 * GET /runs/{id}/items (spec 2.8): committed items by ordinal from pages and rows, plus the
 * live tail of a running run (which live output can still change). The default page is the
 * newest items and always includes the whole tail. `resume_after` is the stream id a client
 * subscribes after to continue exactly where this page ends, without loss or repetition.
 */
export async function readItems(services: Services, bus: StreamBus, given: RunRow, query: ItemsQuery): Promise<Record<string, unknown>> {
  // Also for an accepted run: a worker may claim it and publish between the caller's read of
  // the run and this page's read of the stream's end.
  const live = given.sealed_at === null ? await readLive(services, bus, given) : null;
  const run = live?.run ?? given;
  const committed = run.next_ordinal - 1;
  // Only the running attempt's snapshot is its tail. One of an earlier attempt is what that
  // attempt left (its successor has not anchored yet, so published nothing the stream's end read
  // first could be behind): its uncommitted items are not the run's any more, and the page ends
  // at that stream end as if no snapshot was there (the successor's tail.reset follows it).
  const tailSnapshot = run.status === 'running' && live?.tail?.attempt === run.attempts ? live.tail : null;
  const tail = (tailSnapshot?.items ?? []).filter((i) => (i.ordinal as number) > committed) as unknown as RunItem[];
  let items: RunItem[];
  let includesTail = false;
  if (query.after !== undefined) {
    items = await committedRange(services, run.id, query.after + 1, Math.min(committed, query.after + query.limit));
    if (items.length < query.limit) {
      items.push(...tail.filter((i) => i.ordinal > query.after!).slice(0, query.limit - items.length));
      includesTail = true;
    }
  } else if (query.before !== undefined) {
    const to = Math.min(committed, query.before - 1);
    items = await committedRange(services, run.id, Math.max(1, to - query.limit + 1), to);
  } else {
    const room = Math.max(0, query.limit - tail.length);
    items = [...(await committedRange(services, run.id, Math.max(1, committed - room + 1), committed)), ...tail];
    includesTail = true;
  }
  const last = items[items.length - 1];
  const sealed = run.sealed_at !== null;
  // A running run's page ends at its tail snapshot's id, or — no snapshot: nothing of the
  // current attempt streamed yet (LiveTail anchors before its first publish) — at the stream's
  // end as read before the snapshot. Otherwise the last item's id, the newest id an item
  // carries (items committed while the store was lost carry none), the stream's end, or 0-0.
  const liveResume = includesTail && run.sealed_at === null && live ? (tailSnapshot?.last_stream_id ?? live.streamEnd) : null;
  const resumeAfter =
    liveResume ??
    last?.last_stream_id ??
    newestStreamId(items) ??
    (await bus.lastId(run.thread_id).catch(() => null)) ??
    '0-0';
  return {
    items,
    baseline: query.after === undefined && query.before === undefined,
    complete: sealed && (last === undefined ? committed === 0 : last.ordinal >= committed),
    position: run.display_position,
    resume_after: resumeAfter,
    run: runView(run),
    continuation: {
      run_id: run.id,
      next_ordinal: (last?.ordinal ?? (query.after ?? 0)) + 1,
      position: { attempt: run.attempts, sequence: run.checkpoint_seq },
      response_groups: {},
      full_content: true,
      fragments: { gap: false, max_bytes: 67108864, max_pending: 8, pending: {} },
      // What the run's recall put into its context, by the inbox entry whose input was searched
      // (recorded by the attempt's host; a resume successor carries its predecessor's).
      memory_sources: run.memory_sources,
      arguments: tailSnapshot?.arguments ?? null,
      observer: await observerOf(services, run, tail),
    },
  };
}

const PART_KINDS: Readonly<Record<string, string>> = { text_message: 'text', reasoning: 'reasoning', tool_call: 'tool_call' };

/**
 * What an observer of the run's model stream needs to join it (spec 2.8 observer):
 * `request_index` is the 0-based index of the model request the run is on (its committed
 * request count), `parts` the output parts of that request still being generated (tail items
 * in progress), keyed by item id. A run waiting for its subagents adds, per tool call, the
 * child thread it started (`threads`) and that thread's latest run with its status
 * (`children`), so a client can follow (or answer) the children.
 */
async function observerOf(services: Services, run: RunRow, tail: RunItem[]): Promise<Record<string, unknown>> {
  const parts: Record<string, unknown> = {};
  for (const item of tail) {
    const kind = PART_KINDS[item.kind];
    if (item.state !== 'in_progress' || kind === undefined) continue;
    const streamed = item.kind === 'tool_call' ? item.content.arguments : item.content.text;
    parts[item.id] = {
      part_id: item.id,
      kind,
      tool_name: typeof item.content.tool_name === 'string' ? item.content.tool_name : null,
      emitted_content: typeof streamed === 'string' && streamed.length > 0,
      emitted_signature: false,
    };
  }
  const threads: Record<string, string> = {};
  const children: Record<string, unknown> = {};
  if (run.wait_reason === 'subagent') {
    for (const thread of await subagentThreadsOf(services.pool, run.workspace_id, run.id)) {
      const callId = thread.origin_tool_call_id ?? thread.id;
      threads[callId] = thread.id;
      const runId = thread.current_run_id ?? thread.last_run_id;
      const child = runId ? await getRunById(services.pool, runId) : null;
      children[callId] = { subagent: thread.subagent, thread_id: thread.id, run_id: runId, status: child?.status ?? 'not_started', wait_reason: child?.wait_reason ?? null };
    }
  }
  return { run_id: run.id, thread_id: run.thread_id, state: { request_index: run.usage?.requests ?? 0, threads, children, parts } };
}
