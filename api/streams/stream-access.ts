import { Type } from '@sinclair/typebox';
import { AppError, STREAM_MAX_ID, STREAM_START_ID, authenticate, getThreadState, isStreamId, type Services, type StreamBus } from '../../runtime/index.js';
import { checkHeaderValues, decodeComponent, parseQuery, type RateLimiter } from '../framework/index.js';
import { WS_PROTOCOL, type WsFormat } from './stream-frames.js';

export const StreamId = Type.String({ pattern: '^\\d{1,20}-\\d{1,20}$', description: 'a stream id, `<milliseconds>-<sequence>` (each an unsigned 64-bit integer), ordered within the thread' });

/** The stream's query: only `after` (any other parameter is 400, like every API route). */
export const StreamQuery = Type.Object({ after: Type.Optional(Type.String({ ...StreamId, description: 'resume after this stream id (Last-Event-ID wins when both are sent)' })) });

/** What a stream request carries, copied out of the uWS request before any await. */
export interface StreamRequestInput {
  /** The path segment as sent (percent-encoded). */
  readonly threadId: string;
  readonly authorization: string | undefined;
  readonly workspace: string | undefined;
  readonly lastEventId: string | undefined;
  /** Raw query string (never logged). */
  readonly query: string;
  /** Every header value the API interprets (checked like on every API route). */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** An admitted subscription: who, which thread, and the id to resume after. */
export interface StreamGrant {
  readonly threadId: string;
  readonly workspaceId: string;
  readonly principalId: string;
  readonly after: string;
  /** The stream's last id as admission read it: set when the request gave no resume point (`after` is then this id). */
  readonly streamEnd?: string;
}

/** The WebSocket subprotocols a browser uses for what it cannot put in headers. */
export interface WsProtocols {
  readonly token: string | undefined;
  readonly workspace: string | undefined;
  readonly format: WsFormat;
  /** The protocol answered in the handshake: the chosen format, never a credential ('' if none was offered). */
  readonly answer: string;
}

const BEARER_PROTOCOL = 'bearer.';
const WORKSPACE_PROTOCOL = 'workspace.';
const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * `Sec-WebSocket-Protocol: svc.msgpack.v1, bearer.<token>[, workspace.<id>]`. A browser's
 * WebSocket cannot send Authorization or X-Workspace-ID, and the query string ends up in logs,
 * so credentials ride in a subprotocol. The handshake must answer one offered protocol: the
 * format one, so a client offering a credential must also offer a format.
 */
export function parseWsProtocols(header: string): WsProtocols {
  const offered = header.split(',').map((p) => p.trim()).filter(Boolean);
  let token: string | undefined;
  let workspace: string | undefined;
  let format: WsFormat | null = null;
  for (const protocol of offered) {
    if (protocol.startsWith(BEARER_PROTOCOL)) token ??= protocol.slice(BEARER_PROTOCOL.length);
    else if (protocol.startsWith(WORKSPACE_PROTOCOL)) workspace ??= protocol.slice(WORKSPACE_PROTOCOL.length);
    else if (protocol === WS_PROTOCOL.json) format ??= 'json';
    else if (protocol === WS_PROTOCOL.msgpack) format ??= 'msgpack';
  }
  if (offered.length > 0 && format === null) {
    throw new AppError('invalid_argument', `offer the subprotocol ${WS_PROTOCOL.json} or ${WS_PROTOCOL.msgpack} beside any other`, { details: { field: 'header.sec-websocket-protocol' } });
  }
  return { token, workspace, format: format ?? 'json', answer: format ? WS_PROTOCOL[format] : '' };
}

/**
 * Where to resume: Last-Event-ID (what EventSource sends on reconnect) wins over `?after=`.
 * The query is read like every API route's (unknown or repeated parameters, bad escapes and
 * NUL are 400). A resume point must be a Redis stream id within its range (each part an
 * unsigned 64-bit integer) and not the greatest one, after which nothing can follow: Redis
 * would refuse the read, and the stream would fail after it was answered.
 */
export function resumePoint(lastEventId: string | undefined, rawQuery: string): string | null {
  const query = parseQuery(rawQuery, StreamQuery);
  const field = lastEventId ? 'header.last-event-id' : 'query.after';
  const value = lastEventId || (query.after as string | undefined);
  if (value === undefined || value === '') return null;
  if (!isStreamId(value)) {
    throw new AppError('invalid_argument', `${field}: a stream id is <milliseconds>-<sequence>, each 0 to 18446744073709551615`, { details: { field } });
  }
  if (value === STREAM_MAX_ID) throw new AppError('invalid_argument', `${field}: no event can follow the greatest stream id`, { details: { field } });
  return value;
}

/**
 * The REST pipeline's rules for opening a stream, in its order: header values (400) →
 * authenticate (401/403/404 workspace) → rate limit (429) → read permission (403) → path and
 * query, the resume point's form and range (400) → the thread within the workspace (404) →
 * the key-value store (503: live streams stop while it is lost) → where to start.
 */
export async function admitStream(services: Services, bus: StreamBus, limiter: RateLimiter, input: StreamRequestInput): Promise<StreamGrant> {
  checkHeaderValues(input.headers);
  const principal = await authenticate(services.pool, { authorization: input.authorization, workspace: input.workspace }, { workspaceRequired: true, cache: services.credentialCache });
  await limiter.check(principal.id);
  if (!principal.permissions.has('read')) throw new AppError('forbidden', 'this operation needs the read permission');
  const threadId = decodeComponent(input.threadId, 'path.thread_id');
  const after = resumePoint(input.lastEventId, input.query);
  if (!THREAD_ID.test(threadId)) throw new AppError('not_found', 'thread not found');
  const workspaceId = principal.workspace_id ?? '';
  const thread = await getThreadState(services.pool, workspaceId, threadId);
  if (!thread) throw new AppError('not_found', 'thread not found');
  if (services.kv.state() !== 'ready') {
    throw new AppError('unavailable', 'live thread streams are paused while the key-value store is unavailable; items remain readable', { headers: { 'retry-after': '5' } });
  }
  // Without a resume point the stream starts at its end as of now, before the response is
  // answered: every event published after the client sees the answer reaches it.
  if (after !== null) return { threadId: thread.id, workspaceId, principalId: principal.id, after };
  const end = (await bus.lastId(thread.id)) ?? STREAM_START_ID;
  return { threadId: thread.id, workspaceId, principalId: principal.id, after: end, streamEnd: end };
}
