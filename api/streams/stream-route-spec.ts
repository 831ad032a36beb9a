import { Type } from '@sinclair/typebox';
import { AppError } from '../../runtime/index.js';
import { defineRoute, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody, InboxEntryView, RunItemView, RunView, ThreadStreamView } from '../schemas/index.js';
import { StreamId, StreamQuery } from './stream-access.js';
import { SSE_RETRY_MS, WS_PROTOCOL } from './stream-frames.js';
import { STREAM_ROUTE } from './stream-log.js';
import { WS_CLOSE } from './ws-subscriber.js';

const RunId = Type.String();

/** The events of a thread's stream as clients see them (runtime's StreamEvent, with the API's views). */
export const StreamEventDoc = Type.Union(
  [
    Type.Object({ type: Type.Literal('run.status'), run_id: RunId, status: Type.String(), run: RunView }, { description: 'a run of the thread changed status' }),
    Type.Object({ type: Type.Literal('item.started'), run_id: RunId, ordinal: Type.Integer({ minimum: 1 }), item: RunItemView }, { description: 'a tail item began (state in_progress)' }),
    Type.Object(
      { type: Type.Literal('item.delta'), run_id: RunId, ordinal: Type.Integer({ minimum: 1 }), delta: Type.Object({ text: Type.Optional(Type.String()), arguments: Type.Optional(Type.String()) }) },
      { description: 'text or tool-call arguments appended to the item at `ordinal`' },
    ),
    Type.Object({ type: Type.Literal('item.completed'), run_id: RunId, ordinal: Type.Integer({ minimum: 1 }), item: RunItemView }, { description: 'the item is complete (its final content)' }),
    Type.Object(
      { type: Type.Literal('tail.reset'), run_id: RunId, ordinal: Type.Integer({ minimum: 1 }), attempt: Type.Integer() },
      { description: 'a new attempt restarts the tail at `ordinal`: discard uncommitted items from there on' },
    ),
    Type.Object({ type: Type.Literal('entry.changed'), entry_id: Type.String(), status: Type.String(), entry: InboxEntryView }, { description: 'an inbox entry of the thread changed' }),
    Type.Object(
      { type: Type.Literal('thread.changed'), thread: ThreadStreamView },
      { description: 'the thread changed: its view without message_history, with message_count; GET /threads/{id} for the history' },
    ),
    Type.Object({ type: Type.Literal('stream.live'), after: StreamId }, { description: 'control: the subscription is established; every event after `after` follows, in order (no id)' }),
    Type.Object(
      { type: Type.Literal('stream.reset'), reason: Type.Literal('trimmed'), message: Type.String() },
      { description: 'control: events after the resume point are no longer retained; re-read GET /runs/{id}/items and subscribe after its resume_after (the stream then ends)' },
    ),
    Type.Object(
      { type: Type.Literal('stream.error'), code: Type.Literal('unavailable'), reason: Type.Union([Type.Literal('kv_lost'), Type.Literal('shutdown'), Type.Literal('internal')]), message: Type.String() },
      { description: 'control: the stream ends; reconnect later and resume after the last id' },
    ),
  ],
  { $id: 'StreamEvent' },
);

/** A WebSocket frame (JSON text, or the same map in MessagePack); `id` is absent on control events. */
export const StreamFrameDoc = Type.Object({ id: Type.Optional(StreamId), event: StreamEventDoc }, { $id: 'StreamFrame' });

const DESCRIPTION = `Live events of a thread: everything a UI needs to render it without polling. Two transports on this path.

**Server-Sent Events** (a plain GET, \`Accept: text/event-stream\`): each event is \`id: <stream id>\`, \`event: <type>\`, \`data: <the event as one line of JSON>\`. The response opens with \`retry: ${SSE_RETRY_MS}\`; a \`: keep-alive\` comment is sent every 15 s. Control events (\`stream.*\`) have no \`id:\`.

**WebSocket** (an upgrade on the same path): one frame per event, \`{"id", "event"}\` (the \`StreamFrame\` schema). Subprotocol \`${WS_PROTOCOL.json}\` (text frames, the default) or \`${WS_PROTOCOL.msgpack}\` (binary MessagePack frames). Browsers, which cannot set headers on a WebSocket, may offer \`bearer.<token>\` and \`workspace.<id>\` as further subprotocols (the format subprotocol must then be offered too; it is the one answered). Credentials are never accepted in the query string. Close codes: ${WS_CLOSE.shutdown} server shutdown, ${WS_CLOSE.backpressure} client too slow (or 1006 when cut during a fan-out), ${WS_CLOSE.internal} failure, ${WS_CLOSE.tryAgainLater} key-value store unavailable (try again later), ${WS_CLOSE.reset} stream reset (re-read items).

**Resuming.** Send \`Last-Event-ID\` (SSE) or \`?after=<stream id>\` with the last id received, or the \`resume_after\` of \`GET /runs/{id}/items\` (items also carry first/last_stream_id): every later event arrives exactly once, in order — replayed from the retained stream, then live; \`stream.live\` marks that the subscription is established. Without either, the stream carries every event published after it was answered. Streams keep about 10,000 events per thread for 24 h after the last one; a resume point before that window gets \`stream.reset\` and the stream ends.

**Flow control.** A client that stops reading is disconnected once about 1 MiB is buffered for it. While the key-value store is unavailable new streams answer 503 and open ones end (\`stream.error\`, WebSocket close ${WS_CLOSE.tryAgainLater}); REST keeps working.`;

/**
 * The route-table entry that documents the stream in the OpenAPI document. The path is served
 * raw by registerStreamRoutes (SSE and WebSocket need the uWS response itself), so
 * registerRoutes must skip this entry (isRawStreamRoute).
 */
export function streamRouteSpecs(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: STREAM_ROUTE,
      operationId: 'streamThread',
      summary: 'Live events of a thread (Server-Sent Events or WebSocket)',
      tag: 'runs',
      description: DESCRIPTION,
      params: Type.Object({ thread_id: Type.String({ minLength: 1, maxLength: 128 }) }),
      query: StreamQuery,
      responses: {
        101: { description: `WebSocket: switching protocols; frames are StreamFrame (${WS_PROTOCOL.json} text or ${WS_PROTOCOL.msgpack} binary)`, schema: StreamFrameDoc },
        200: { description: 'text/event-stream: `data:` of each event is one StreamEvent', schema: StreamEventDoc },
        400: { description: 'an unknown query parameter, or a resume point that is not a stream id (both parts within 0 to 2^64 − 1, not the greatest id)', schema: ErrorBody },
        404: { description: 'no such thread in this workspace', schema: ErrorBody },
        503: { description: 'the key-value store is unavailable: live streams are paused (Retry-After)', schema: ErrorBody },
      },
      handler: async () => {
        throw new AppError('internal', 'the stream route is served by registerStreamRoutes');
      },
    }),
  ];
}

/** True for the entries streamRouteSpecs() adds (documented here, served raw). */
export function isRawStreamRoute(route: ApiRouteSpec): boolean {
  return route.path === STREAM_ROUTE && route.method === 'GET';
}
