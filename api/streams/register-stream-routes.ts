import { engineFor } from '../../actors/index.js';
import { errorResponse, requestIdFrom, type HttpServer, type Services, type Stoppable, type StreamBus, type Uws } from '../../runtime/index.js';
import { INTERPRETED_HEADERS, type RateLimiter } from '../framework/index.js';
import { admitStream, parseWsProtocols, type StreamGrant, type StreamRequestInput } from './stream-access.js';
import { StreamHub } from './stream-hub.js';
import { logStreamAnswer, logStreamEnd } from './stream-log.js';
import { createStreamMetrics, type StreamMetrics } from './stream-metrics.js';
import { SseSubscriber } from './sse-subscriber.js';
import type { FinishReason, StreamSubscriber } from './stream-subscriber.js';
import { WsSubscriber, type WsUserData } from './ws-subscriber.js';

const PATTERN = '/api/v1/threads/:thread_id/stream';
/** Per-subscriber bound on bytes written and not yet read by the client (both transports). */
export const STREAM_MAX_BUFFERED_BYTES = 1024 * 1024;
const WS_IDLE_TIMEOUT_SECONDS = 60;

interface StreamDeps {
  services: Services;
  bus: StreamBus;
  limiter: RateLimiter;
  hub: StreamHub;
  metrics: StreamMetrics;
}

/** Copies what admission needs out of the uWS request (valid only until the first await). */
function readInput(req: Uws.HttpRequest, authorization: string | undefined, workspace: string | undefined): StreamRequestInput {
  return {
    threadId: req.getParameter(0) ?? '',
    authorization,
    workspace,
    lastEventId: req.getHeader('last-event-id') || undefined,
    query: req.getQuery() ?? '',
    headers: Object.fromEntries(INTERPRETED_HEADERS.map((name) => [name, req.getHeader(name) || undefined])),
  };
}

/** Writes an error answer (the API's error body) on a response that has not started. */
function answerError(res: Uws.HttpResponse, error: unknown, requestId: string, deps: StreamDeps): number {
  const { response, internal } = errorResponse(error, requestId);
  if (internal) deps.services.logger.error({ request_id: requestId, err: error }, 'unhandled error opening a stream');
  res.cork(() => {
    res.writeStatus(`${response.status}`);
    res.writeHeader('x-request-id', requestId);
    res.writeHeader('content-type', 'application/json');
    for (const [name, value] of Object.entries(response.headers ?? {})) res.writeHeader(name, value);
    res.end(JSON.stringify(response.body));
  });
  return response.status;
}

/** Joins the hub unless the store was lost between admission and now. */
function join(deps: StreamDeps, grant: StreamGrant, subscriber: StreamSubscriber): void {
  if (deps.services.kv.state() !== 'ready') return subscriber.finish('kv_lost');
  void deps.hub.join(grant.threadId, subscriber, grant.after, grant.streamEnd);
}

function serveSse(res: Uws.HttpResponse, req: Uws.HttpRequest, deps: StreamDeps): void {
  const started = performance.now();
  const requestId = requestIdFrom(req.getHeader('x-request-id') || undefined);
  const input = readInput(req, req.getHeader('authorization') || undefined, req.getHeader('x-workspace-id') || undefined);
  const state: { aborted: boolean; subscriber: SseSubscriber | null } = { aborted: false, subscriber: null };
  // Registered before any await (uWS requires it).
  res.onAborted(() => {
    state.aborted = true;
    state.subscriber?.aborted();
  });
  admitStream(deps.services, deps.bus, deps.limiter, input)
    .then((grant) => {
      if (state.aborted) return;
      const onEnd = (reason: FinishReason): void => {
        deps.hub.leave(subscriber, grant.threadId);
        deps.metrics.finished.inc({ reason });
        logStreamEnd(deps.services, { requestId, transport: 'sse', threadId: grant.threadId, reason, openedAt: started });
      };
      const subscriber = new SseSubscriber(res, STREAM_MAX_BUFFERED_BYTES, onEnd);
      state.subscriber = subscriber;
      subscriber.open(requestId);
      logStreamAnswer(deps.services, { requestId, transport: 'sse', status: 200, started, principalId: grant.principalId, workspaceId: grant.workspaceId });
      join(deps, grant, subscriber);
    })
    .catch((error: unknown) => {
      if (state.aborted || state.subscriber) return;
      const status = answerError(res, error, requestId, deps);
      logStreamAnswer(deps.services, { requestId, transport: 'sse', status, started });
    });
}

function upgrade(res: Uws.HttpResponse, req: Uws.HttpRequest, context: Uws.us_socket_context_t, deps: StreamDeps): void {
  const started = performance.now();
  const requestId = requestIdFrom(req.getHeader('x-request-id') || undefined);
  const key = req.getHeader('sec-websocket-key');
  const extensions = req.getHeader('sec-websocket-extensions');
  const protocolHeader = req.getHeader('sec-websocket-protocol');
  const authorization = req.getHeader('authorization') || undefined;
  const workspace = req.getHeader('x-workspace-id') || undefined;
  const partial = readInput(req, authorization, workspace);
  let aborted = false;
  res.onAborted(() => (aborted = true));
  Promise.resolve()
    .then(async () => {
      const protocols = parseWsProtocols(protocolHeader);
      const input = { ...partial, authorization: authorization ?? (protocols.token ? `Bearer ${protocols.token}` : undefined), workspace: workspace ?? protocols.workspace };
      return { grant: await admitStream(deps.services, deps.bus, deps.limiter, input), protocols };
    })
    .then(({ grant, protocols }) => {
      if (aborted) return;
      const data: WsUserData = { grant, format: protocols.format, requestId, openedAt: performance.now(), subscriber: null };
      res.cork(() => res.upgrade(data, key, protocols.answer, extensions, context));
      logStreamAnswer(deps.services, { requestId, transport: 'ws', status: 101, started, principalId: grant.principalId, workspaceId: grant.workspaceId });
    })
    .catch((error: unknown) => {
      if (aborted) return;
      const status = answerError(res, error, requestId, deps);
      logStreamAnswer(deps.services, { requestId, transport: 'ws', status, started });
    });
}

function wsBehavior(deps: StreamDeps): Uws.WebSocketBehavior<WsUserData> {
  return {
    maxPayloadLength: 4 * 1024,
    idleTimeout: WS_IDLE_TIMEOUT_SECONDS,
    sendPingsAutomatically: true,
    maxBackpressure: STREAM_MAX_BUFFERED_BYTES,
    // Typed as a number in this build's declarations; the addon reads it as a boolean.
    closeOnBackpressureLimit: 1,
    upgrade: (res, req, context) => {
      try {
        upgrade(res, req, context, deps);
      } catch (error) {
        deps.services.logger.error({ err: error }, 'stream upgrade failed');
        res.close();
      }
    },
    open: (ws) => {
      const data = ws.getUserData();
      data.subscriber = new WsSubscriber(ws, data.format);
      join(deps, data.grant, data.subscriber);
    },
    // Clients have nothing to say on this socket; what they send is ignored.
    message: () => undefined,
    drain: (ws) => ws.getUserData().subscriber?.drained(),
    close: (ws, code) => {
      const data = ws.getUserData();
      const subscriber = data.subscriber;
      if (!subscriber) return;
      const reason = subscriber.closedNow(code);
      deps.hub.leave(subscriber, data.grant.threadId);
      deps.metrics.finished.inc({ reason });
      logStreamEnd(deps.services, { requestId: data.requestId, transport: 'ws', threadId: data.grant.threadId, reason, openedAt: data.openedAt });
    },
  };
}

/**
 * GET /api/v1/threads/{thread_id}/stream on the shared uWS app, in two transports on one path:
 * a WebSocket upgrade (uWS routes upgrade requests to the ws behaviour) and Server-Sent Events
 * for every other GET. Losing the key-value store ends every open stream (clients reconnect
 * and resume); new ones answer 503 until it is back, then work again without a restart.
 */
export function registerStreamRoutes(server: HttpServer, services: Services, limiter: RateLimiter): Stoppable {
  const metrics = createStreamMetrics(services.metrics);
  const bus = engineFor(services).bus;
  const hub = new StreamHub(server.app, bus, services.logger, metrics);
  const deps: StreamDeps = { services, bus, limiter, hub, metrics };
  const offState = services.kv.onStateChange((state) => {
    if (state === 'lost') hub.finishAll('kv_lost');
  });
  server.app.ws<WsUserData>(PATTERN, wsBehavior(deps));
  server.raw('GET', PATTERN, (res, req) => {
    try {
      serveSse(res, req, deps);
    } catch (error) {
      // Never let an exception escape a uWS handler.
      services.logger.error({ err: error }, 'stream handler failed');
      try {
        res.close();
      } catch {
        // already answered or gone
      }
    }
  });
  return {
    stop: async () => {
      offState();
      hub.close();
    },
  };
}
