import { Type } from '@sinclair/typebox';
import { AppError, entryView, getEntry, getThreadState, JsonArrayText, listEntries, mapEntry, mapRun, mapThreadState, runView, threadView, type InboxEntry } from '../../runtime/index.js';
import { engineFor, enqueueInput, RunOptions, withdrawEntry, type ThreadResult } from '../../actors/index.js';
import { defineRoute, storedHistoryPrefix, type ApiResult, type ApiRouteSpec } from '../framework/index.js';
import { Cursor, EntryRunThread, ErrorBody, InboxEntryView, InputPayload, Limit, ListOf } from '../schemas/index.js';

const ThreadParams = Type.Object({ thread_id: Type.String({ minLength: 1, maxLength: 128 }) });
const Id = Type.String({ minLength: 1, maxLength: 128 });
/** The inbox POST's status, which its stored response records too. */
const CREATED = 201;

export function toThreadBody(result: ThreadResult): Record<string, unknown> {
  return { entry: entryView(result.entry), run: result.run ? runView(result.run) : null, thread: threadView(result.thread) };
}

/**
 * The inbox POST's response from the rows its one statement stored with its key (a replay): the
 * same views of the same rows as the first response, the history as the first response's
 * prefix (the thread's message_count then), read back by the replay.
 */
function renderStoredInboxRows(rows: Record<string, unknown>): unknown {
  const thread = mapThreadState(rows.thread as Record<string, unknown>);
  const body = toThreadBody({
    entry: mapEntry(rows.entry as Record<string, unknown>),
    run: rows.run ? mapRun(rows.run as Record<string, unknown>) : null,
    thread: { ...thread, message_history: JsonArrayText.EMPTY },
  });
  return { ...body, thread: { ...(body.thread as object), message_history: storedHistoryPrefix(thread.message_count) } };
}

export function inboxRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/threads/{thread_id}/inbox',
      operationId: 'enqueueInput',
      summary: 'Queue an input on a thread; an idle thread starts a run at once',
      description: 'delivery queue (default) waits for the thread to be idle; steer joins the executing run before its next model request, or starts a run on an idle thread. `run` is null while the entry is queued.',
      tag: 'runs',
      permission: 'run',
      idempotency: 'required',
      // One commit per POST: the key is claimed in the thread actor's transaction — or, on the
      // one-statement path, by that statement itself, whose record is the rows rendered here.
      idempotencyInTransaction: true,
      storedRows: { status: CREATED, render: renderStoredInboxRows },
      params: ThreadParams,
      body: Type.Object(
        {
          agent_id: Id,
          agent_revision_id: Type.Optional(Id),
          kind: Type.Optional(Type.Literal('message')),
          delivery: Type.Optional(Type.Union([Type.Literal('queue'), Type.Literal('steer')])),
          payload: InputPayload,
          options: Type.Optional(RunOptions),
        },
        { additionalProperties: false },
      ),
      responses: { 201: { description: 'queued', schema: EntryRunThread }, 404: { description: 'thread, agent, revision or a resource named by options.overrides (model, reviewer model, skill) not found; details.field names the body field', schema: ErrorBody }, 409: { description: 'agent archived', schema: ErrorBody } },
      handler: async (ctx) => {
        const engine = engineFor(ctx.services);
        const respond = (result: ThreadResult): ApiResult => {
          // links the request's log record to the entry and run it created
          ctx.request.log.entry_id = result.entry.id;
          if (result.run) ctx.request.log.run_id = result.run.id;
          return { status: CREATED, body: toThreadBody(result) };
        };
        let response: ApiResult | undefined;
        const result = await enqueueInput(
          engine,
          { workspaceId: ctx.workspaceId, threadId: ctx.params.thread_id, principal: ctx.principal, requestKey: ctx.request.headers['idempotency-key'] ?? null },
          { ...ctx.body, payload: ctx.body.payload as Record<string, unknown>, options: ctx.body.options as Record<string, unknown> | undefined },
          async (tx, result) => {
            response = respond(result);
            await ctx.completeIdempotency(tx, response);
          },
          (tx) => ctx.beginIdempotency(tx),
          // The one-statement path records the key itself (its response is then built here).
          ctx.statementIdempotency,
        );
        return response ?? respond(result);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/threads/{thread_id}/inbox',
      operationId: 'listInbox',
      summary: 'Inbox entries of a thread in position order (withdrawn entries stay as tombstones)',
      tag: 'runs',
      params: ThreadParams,
      query: Type.Object({ limit: Limit(200, 50), cursor: Cursor }),
      responses: { 200: { description: 'entries', schema: ListOf(InboxEntryView) } },
      handler: async ({ services, workspaceId, params, query, cursors }) => {
        const thread = await getThreadState(services.pool, workspaceId, params.thread_id);
        if (!thread) throw new AppError('not_found', 'thread not found');
        const limit = query.limit ?? 50;
        const rows = await listEntries(services.pool, thread.id, { afterPosition: cursors.decode(query.cursor, { p: 'count' })?.p, limit: limit + 1 });
        const body = cursors.page(rows, limit, (e: InboxEntry) => ({ p: e.position }));
        return { status: 200, body: { items: body.items.map(entryView), next_cursor: body.next_cursor } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/threads/{thread_id}/inbox/{entry_id}',
      operationId: 'withdrawEntry',
      summary: 'Withdraw a pending entry; it leaves a tombstone that keeps its request key',
      tag: 'runs',
      permission: 'run',
      ifMatch: true,
      params: Type.Object({ thread_id: Id, entry_id: Id }),
      responses: { 200: { description: 'withdrawn', schema: EntryRunThread }, 409: { description: 'the entry is not pending', schema: ErrorBody } },
      handler: async (ctx) => {
        const result = await withdrawEntry(engineFor(ctx.services), { workspaceId: ctx.workspaceId, threadId: ctx.params.thread_id, entryId: ctx.params.entry_id }, ctx.precondition);
        return { status: 200, body: toThreadBody(result), etag: result.entry };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/threads/{thread_id}/inbox/{entry_id}',
      operationId: 'getEntry',
      summary: 'One inbox entry (its ETag is what DELETE takes in If-Match)',
      tag: 'runs',
      params: Type.Object({ thread_id: Id, entry_id: Id }),
      responses: { 200: { description: 'the entry', schema: InboxEntryView } },
      handler: async ({ services, workspaceId, params }) => {
        const entry = await getEntry(services.pool, workspaceId, params.entry_id);
        if (!entry || entry.thread_id !== params.thread_id) throw new AppError('not_found', 'inbox entry not found');
        return { status: 200, body: entryView(entry), etag: entry };
      },
    }),
  ];
}
