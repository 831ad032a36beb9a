// Watches one thread's live stream for the run scenarios, timestamping every event on arrival.
// Two sources, tried in this order:
//   sse          GET /api/v1/threads/{id}/stream (text/event-stream), what a client sees; a
//                watch is returned once the stream says `stream.live` (subscribed);
//   redis-xread  XREAD BLOCK on the service's own Redis stream of the thread
//                (`<kv prefix>stream:<thread id>`, runtime/streams/stream-bus.ts): the point
//                where the worker has published the event, one hop before a control process
//                fans it out. Used while the service has no stream endpoint (it answers 404).
// The source is reported with the figures, so a reader knows which hop the numbers stop at.
import http from 'node:http';
import { Redis } from 'ioredis';
import type { BenchContext } from './scenario.js';
import type { SeededWorkspace } from './service-seed.js';

export type StreamSource = 'sse' | 'redis-xread';

/** The slice of a stream event (runtime/streams/stream-event.ts) the scenarios read. */
export interface SeenEvent {
  readonly type: string;
  readonly run_id?: string;
  readonly status?: string;
  /** performance.now() when the harness received it. */
  readonly at: number;
}

export interface ThreadWatch {
  readonly source: StreamSource;
  /** Resolves with the first event (already seen or still to come) that matches. */
  next(match: (e: SeenEvent) => boolean, timeoutMs: number): Promise<SeenEvent>;
  /**
   * Drops every event seen up to and including `event` (one that next() returned): a closed loop
   * calls it with its run's last event, so the events it keeps — and next()'s scan — stay a
   * run's worth instead of growing with the scenario (a scan over every event ever seen took a
   * fifth of the harness's CPU by the end of a 12 s run-latency-32).
   */
  forgetThrough(event: SeenEvent): void;
  close(): void;
  /** SSE: ms from sending the GET to its `stream.live` (the subscription established); null for a Redis watch. */
  readonly liveMs: number | null;
}

const BLOCK_MS = 1_000;
/** How long a new SSE subscription may take to be established (`stream.live`). */
const LIVE_TIMEOUT_MS = 15_000;

class EventLog {
  private readonly seen: SeenEvent[] = [];
  private waiters: Array<{ match: (e: SeenEvent) => boolean; resolve: (e: SeenEvent) => void }> = [];

  push(raw: string, at: number): void {
    const parsed = JSON.parse(raw) as Omit<SeenEvent, 'at'>; // I/O edge: the service's event JSON
    const event: SeenEvent = { ...parsed, at };
    this.seen.push(event);
    this.waiters = this.waiters.filter((w) => (w.match(event) ? (w.resolve(event), false) : true));
  }

  forgetThrough(event: SeenEvent): void {
    const at = this.seen.indexOf(event);
    if (at >= 0) this.seen.splice(0, at + 1);
  }

  next(match: (e: SeenEvent) => boolean, timeoutMs: number, what: string): Promise<SeenEvent> {
    const found = this.seen.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching ${what} event within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  }
}

/** Opens the SSE stream if the service serves one, else reads the thread's Redis stream. */
export async function watchThread(ctx: BenchContext, seed: SeededWorkspace, kv: { url: string; prefix: string }, threadId: string): Promise<ThreadWatch> {
  const sse = await watchSse(seed, threadId);
  if (!sse) return watchRedis(ctx, kv, threadId);
  ctx.onCleanup(sse.close);
  return sse;
}

async function watchSse(seed: SeededWorkspace, threadId: string): Promise<ThreadWatch | null> {
  // node:http, not the global fetch with web streams: the harness shares the machine's cores
  // with the service (see Api.call). Every chunk is timestamped when its 'data' event runs.
  const url = new URL(`${seed.api.base}/api/v1/threads/${threadId}/stream`);
  const sent = performance.now();
  const request = http.get({ host: url.hostname, port: url.port, path: url.pathname, agent: false, headers: { ...seed.api.headers, accept: 'text/event-stream' } });
  const response = await new Promise<http.IncomingMessage | null>((resolve) => {
    request.on('response', resolve);
    request.on('error', () => resolve(null));
  });
  if (!response || response.statusCode !== 200 || !(response.headers['content-type'] ?? '').includes('text/event-stream')) {
    request.destroy();
    return null;
  }
  const log = new EventLog();
  let buffered = '';
  response.setEncoding('utf8');
  response.on('data', (value: string) => {
    const at = performance.now();
    buffered += value;
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (data) log.push(data, at);
    }
  });
  response.on('error', () => undefined); // destroyed at close()
  // Resolved once the subscription is established (`stream.live`: every later event follows),
  // as a client that subscribes before it posts would wait: the subscription's own set-up
  // (the hub's reads of the thread's stream) is then not inside a scenario's timed interval.
  let liveMs: number;
  try {
    const live = await log.next((e) => e.type === 'stream.live', LIVE_TIMEOUT_MS, 'stream.live');
    log.forgetThrough(live);
    liveMs = live.at - sent;
  } catch (error) {
    request.destroy();
    throw error;
  }
  return { source: 'sse', liveMs, next: (m, t) => log.next(m, t, 'SSE'), forgetThrough: (e) => log.forgetThrough(e), close: () => request.destroy() };
}

function watchRedis(ctx: BenchContext, kv: { url: string; prefix: string }, threadId: string): ThreadWatch {
  const redis = new Redis(kv.url, { maxRetriesPerRequest: 1, commandTimeout: BLOCK_MS + 4_000, connectionName: 'bench-thread-watch' });
  redis.on('error', (err: Error) => ctx.log(`thread watch redis: ${err.message}`));
  const key = `${kv.prefix}stream:${threadId}`;
  const log = new EventLog();
  let open = true;
  void (async () => {
    // A fresh thread has no stream yet: reading from 0-0 cannot miss its first event.
    let last = '0-0';
    while (open && !ctx.signal.aborted) {
      const reply = await redis.xread('COUNT', 100, 'BLOCK', BLOCK_MS, 'STREAMS', key, last);
      const at = performance.now();
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          last = id;
          // Fields are ['e', '<event json>'] (stream-bus.ts publish).
          const json = fields[1];
          if (json !== undefined) log.push(json, at);
        }
      }
    }
  })().catch((err: unknown) => {
    if (open) ctx.log(`thread watch: ${err instanceof Error ? err.message : String(err)}`);
  });
  const close = (): void => {
    open = false;
    redis.disconnect();
  };
  ctx.onCleanup(close);
  return { source: 'redis-xread', liveMs: null, next: (m, t) => log.next(m, t, 'stream'), forgetThrough: (e) => log.forgetThrough(e), close };
}
