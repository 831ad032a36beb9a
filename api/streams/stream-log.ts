import type { Services } from '../../runtime/index.js';
import type { FinishReason } from './stream-subscriber.js';

export const STREAM_ROUTE = '/api/v1/threads/{thread_id}/stream';

/**
 * The request log of a stream, in the API's format (by route pattern; never the URL, query
 * string or subprotocols, which may hold a credential): once when it is answered (101, 200 or
 * an error), once when it ends.
 */
export function logStreamAnswer(services: Services, entry: { requestId: string; transport: 'sse' | 'ws'; status: number; started: number; principalId?: string; workspaceId?: string }): void {
  const seconds = (performance.now() - entry.started) / 1000;
  services.metrics.httpRequests.inc({ method: 'GET', route: STREAM_ROUTE, status: String(entry.status) });
  services.metrics.httpDuration.observe({ method: 'GET', route: STREAM_ROUTE }, seconds);
  services.logger.info(
    {
      request_id: entry.requestId,
      method: 'GET',
      route: STREAM_ROUTE,
      status: entry.status,
      transport: entry.transport,
      duration_ms: Math.round(seconds * 1e4) / 10,
      ...(entry.principalId ? { principal_id: entry.principalId } : {}),
      ...(entry.workspaceId ? { workspace_id: entry.workspaceId } : {}),
    },
    'request',
  );
}

export function logStreamEnd(services: Services, entry: { requestId: string; transport: 'sse' | 'ws'; threadId: string; reason: FinishReason; openedAt: number }): void {
  services.logger.info(
    { request_id: entry.requestId, route: STREAM_ROUTE, transport: entry.transport, thread_id: entry.threadId, reason: entry.reason, open_ms: Math.round(performance.now() - entry.openedAt) },
    'stream closed',
  );
}
