import { Type } from '@sinclair/typebox';
import {
  AppError,
  ID_PREFIX,
  entriesOfSession,
  getApiKey,
  getSession,
  getThreadForView,
  getUser,
  insertAuditEvent,
  insertSession,
  insertThread,
  listSessions,
  listThreads,
  newId,
  McpHeaderMap,
  reservedHeaderName,
  threadView,
  type Queryable,
} from '../../runtime/index.js';
import { defineRoute, type ApiRouteSpec } from '../framework/index.js';
import { Cursor, ErrorBody, Labels, Limit, ListOf, SessionView, ThreadView } from '../schemas/index.js';

const SessionParams = Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 128 }) });

const McpHeaders = Type.Record(Type.String({ minLength: 1, maxLength: 128 }), McpHeaderMap, { maxProperties: 64, description: 'connection id → header name → value (spec 2.7)' });

function refuseReservedMcpHeaders(headers: Record<string, Record<string, string>>): void {
  for (const [connection, map] of Object.entries(headers)) {
    const name = reservedHeaderName(map);
    if (name === undefined) continue;
    const field = `body.mcp_headers.${connection}.${name}`;
    throw new AppError('invalid_argument', `${field}: this header is set by the MCP session itself`, { details: { field } });
  }
}

async function sessionOr404(db: Queryable, workspaceId: string, id: string) {
  const session = await getSession(db, workspaceId, id);
  if (!session) throw new AppError('not_found', 'session not found');
  return session;
}

async function principalOf(db: Queryable, workspaceId: string, principalId: string | null) {
  if (!principalId) return null;
  if (principalId.startsWith(`${ID_PREFIX.apiKey}_`)) {
    const key = await getApiKey(db, workspaceId, principalId);
    return key && { id: key.id, kind: 'api_key', status: key.revoked_at ? 'revoked' : 'active', name: key.name, email: '', image_url: '' };
  }
  const user = await getUser(db, principalId);
  return user && { id: user.id, kind: 'user', status: user.disabled_at ? 'disabled' : 'active', name: user.name, email: user.email, image_url: user.image_url };
}

export function sessionRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'POST', path: '/api/v1/sessions', operationId: 'createSession', summary: 'Create a session', tag: 'runs', idempotency: 'optional',
      body: Type.Object({ labels: Type.Optional(Labels) }, { additionalProperties: false }), bodyOptional: true,
      responses: { 201: { description: 'created', schema: SessionView } },
      handler: (ctx) =>
        ctx.transaction(async (tx) => {
          const session = await insertSession(tx, { id: newId(ID_PREFIX.session), workspace_id: ctx.workspaceId, labels: ctx.body?.labels ?? {}, created_by_id: ctx.principal.id });
          await insertAuditEvent(tx, { workspace_id: ctx.workspaceId, actor_id: ctx.principal.id, action: 'session.created', resource_type: 'session', resource_id: session.id, request_id: ctx.requestId });
          return { status: 201, body: session, etag: session };
        }),
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/sessions', operationId: 'listSessions', summary: 'Sessions of the workspace', tag: 'runs',
      query: Type.Object({ limit: Limit(100, 50), cursor: Cursor }),
      responses: { 200: { description: 'sessions', schema: ListOf(SessionView) } },
      handler: async ({ services, workspaceId, query, cursors }) => {
        const limit = query.limit ?? 50;
        const rows = await listSessions(services.pool, workspaceId, { after: cursors.decode(query.cursor, { id: 'text' })?.id, limit: limit + 1 });
        return { status: 200, body: cursors.page(rows, limit, (s) => ({ id: s.id })) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/sessions/{session_id}', operationId: 'getSession', summary: 'One session', tag: 'runs', params: SessionParams,
      responses: { 200: { description: 'the session', schema: SessionView }, 404: { description: 'not found', schema: ErrorBody } },
      handler: async ({ services, workspaceId, params }) => {
        const session = await sessionOr404(services.pool, workspaceId, params.session_id);
        return { status: 200, body: session, etag: session };
      },
    }),
    defineRoute({
      method: 'POST', path: '/api/v1/sessions/{session_id}/threads', operationId: 'createThread', summary: 'Create a thread in a session', tag: 'runs', idempotency: 'optional',
      description: 'mcp_headers: per connection id, extra headers sent with every request of this thread\'s runs to that connection\'s MCP server (the connection\'s own authorization wins over a header of the same name; headers the MCP session sets itself are refused).',
      params: SessionParams, body: Type.Object({ labels: Type.Optional(Labels), mcp_headers: Type.Optional(McpHeaders) }, { additionalProperties: false }), bodyOptional: true,
      responses: { 201: { description: 'created', schema: ThreadView }, 400: { description: 'invalid body', schema: ErrorBody }, 404: { description: 'no such session', schema: ErrorBody } },
      handler: async (ctx) => {
        await sessionOr404(ctx.services.pool, ctx.workspaceId, ctx.params.session_id);
        const mcpHeaders = ctx.body?.mcp_headers ?? {};
        refuseReservedMcpHeaders(mcpHeaders);
        const id = newId(ID_PREFIX.thread);
        const created = await ctx.transaction(async (tx) => {
          const thread = await insertThread(tx, { id, workspace_id: ctx.workspaceId, session_id: ctx.params.session_id, labels: ctx.body?.labels ?? {}, mcp_headers: mcpHeaders });
          await insertAuditEvent(tx, { workspace_id: ctx.workspaceId, actor_id: ctx.principal.id, action: 'thread.created', resource_type: 'thread', resource_id: thread.id, request_id: ctx.requestId });
          // A new thread's history is empty (this route takes none); insertThread does not read it back.
          return { status: 201, body: threadView({ ...thread, message_history: [] }), etag: thread };
        });
        // Committed: the process knows the whole (empty) history of the thread's first input.
        if (created.status === 201) ctx.services.histories.created(id);
        return created;
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/sessions/{session_id}/threads', operationId: 'listThreads', summary: 'Threads of a session', tag: 'runs',
      params: SessionParams, query: Type.Object({ limit: Limit(100, 50), cursor: Cursor }),
      responses: { 200: { description: 'threads', schema: ListOf(ThreadView) } },
      handler: async ({ services, workspaceId, params, query, cursors }) => {
        await sessionOr404(services.pool, workspaceId, params.session_id);
        const limit = query.limit ?? 50;
        const rows = await listThreads(services.pool, workspaceId, params.session_id, { after: cursors.decode(query.cursor, { id: 'text' })?.id, limit: limit + 1 });
        return { status: 200, body: { ...cursors.page(rows, limit, (t) => ({ id: t.id })), items: rows.slice(0, limit).map(threadView) } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/threads/{thread_id}', operationId: 'getThread', summary: 'One thread', tag: 'runs',
      params: Type.Object({ thread_id: Type.String({ minLength: 1, maxLength: 128 }) }),
      responses: { 200: { description: 'the thread', schema: ThreadView }, 404: { description: 'not found', schema: ErrorBody } },
      handler: async ({ services, workspaceId, params }) => {
        const thread = await getThreadForView(services.pool, workspaceId, params.thread_id, services.histories.get(params.thread_id));
        if (!thread) throw new AppError('not_found', 'thread not found');
        services.histories.remember(thread.id, thread.message_history);
        return { status: 200, body: threadView(thread), etag: thread };
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/sessions/{session_id}/message-authors', operationId: 'listMessageAuthors', summary: 'Who submitted the given inbox entries (spec 2.11)', tag: 'runs',
      params: SessionParams, query: Type.Object({ entry_id: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 100 }) }),
      responses: { 200: { description: 'authors', schema: Type.Object({ items: Type.Array(Type.Record(Type.String(), Type.Unknown())) }) } },
      handler: async ({ services, workspaceId, params, query }) => {
        await sessionOr404(services.pool, workspaceId, params.session_id);
        const entries = await entriesOfSession(services.pool, workspaceId, params.session_id, [...new Set(query.entry_id)]);
        const items = await Promise.all(
          entries.map(async (e) => ({ entry_id: e.id, principal_id: e.principal_id, submitted_at: e.created_at, principal: await principalOf(services.pool, workspaceId, e.principal_id) })),
        );
        return { status: 200, body: { items } };
      },
    }),
  ];
}
