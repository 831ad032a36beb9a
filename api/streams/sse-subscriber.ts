import type { Uws } from '../../runtime/index.js';
import { SSE_DRAIN_NUDGE, SSE_HEARTBEAT, SSE_PREAMBLE, sseControl, type ControlEvent, type EncodedRecord } from './stream-frames.js';
import type { ChannelLink, FinishReason, Placement, SseSink, StreamSubscriber } from './stream-subscriber.js';

/** The last event an SSE stream gets before it ends, by reason (none when the client is gone). */
function finalEvent(reason: FinishReason): ControlEvent | null {
  switch (reason) {
    case 'trimmed':
      return { type: 'stream.reset', reason: 'trimmed', message: 'events after the resume point were trimmed: re-read GET /runs/{id}/items and resume after its resume_after' };
    case 'kv_lost':
      return { type: 'stream.error', code: 'unavailable', reason: 'kv_lost', message: 'the key-value store is unavailable; reconnect later and resume with Last-Event-ID' };
    case 'shutdown':
      return { type: 'stream.error', code: 'unavailable', reason: 'shutdown', message: 'the server is shutting down; reconnect and resume with Last-Event-ID' };
    case 'internal':
      return { type: 'stream.error', code: 'unavailable', reason: 'internal', message: 'the stream failed; reconnect and resume with Last-Event-ID' };
    case 'backpressure':
    case 'abnormal':
    case 'client_closed':
      return null;
    default: {
      const never: never = reason;
      return never;
    }
  }
}

/**
 * One Server-Sent Events response. uWS topics are WebSocket-only, so SSE has its own write
 * path with its own backpressure bound: once uWS holds bytes the socket did not take, further
 * chunks queue here until the socket drains (onWritable); a client whose backlog passes
 * `maxBufferedBytes` is disconnected, so it never holds memory or slows the fan-out to others.
 * Byte counts are UTF-16 lengths: an estimate, good enough for a bound.
 */
export class SseSubscriber implements StreamSubscriber, SseSink {
  readonly transport = 'sse' as const;
  private ended = false;
  private queue: string[] = [];
  private queuedBytes = 0;
  /** Upper estimate of the bytes uWS holds after a write the socket did not fully take. */
  private heldByUws = 0;
  private drainWaiters: Array<() => void> = [];
  private placement: Placement | null = null;

  constructor(
    private readonly res: Uws.HttpResponse,
    private readonly maxBufferedBytes: number,
    private readonly onEnd: (reason: FinishReason) => void,
  ) {}

  get closed(): boolean {
    return this.ended;
  }

  /** Status, headers and the preamble; call once, right after admission. */
  open(requestId: string): void {
    this.res.onWritable(() => this.drain());
    this.res.cork(() => {
      this.res.writeStatus('200 OK');
      this.res.writeHeader('content-type', 'text/event-stream; charset=utf-8');
      this.res.writeHeader('cache-control', 'no-store');
      this.res.writeHeader('x-accel-buffering', 'no');
      this.res.writeHeader('x-request-id', requestId);
      this.write(SSE_PREAMBLE);
    });
  }

  write(chunk: string): void {
    if (this.ended) return;
    if (this.heldByUws > 0) {
      this.queue.push(chunk);
      this.queuedBytes += chunk.length;
      if (this.bufferedBytes() > this.maxBufferedBytes) this.finish('backpressure');
      return;
    }
    let written = false;
    this.res.cork(() => (written = this.res.write(chunk)));
    if (!written) this.heldByUws = chunk.length;
  }

  sendRecord(record: EncodedRecord): void {
    this.write(record.sse());
  }

  sendControl(event: ControlEvent): void {
    this.write(sseControl(event));
  }

  heartbeat(): void {
    this.write(SSE_HEARTBEAT);
  }

  attach(link: ChannelLink): void {
    if (this.ended || this.placement) return;
    this.placement = link.joinSse(this);
  }

  detach(link: ChannelLink): void {
    if (this.placement) link.leaveSse(this.placement, this);
    this.placement = null;
  }

  bufferedBytes(): number {
    return this.queuedBytes + this.heldByUws;
  }

  whenDrained(): Promise<void> {
    if (this.ended || this.bufferedBytes() === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private releaseWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  finish(reason: FinishReason): void {
    if (this.ended) return;
    this.ended = true;
    const last = finalEvent(reason);
    this.res.cork(() => {
      // A client that does not read gets no goodbye: close the socket (uWS frees its buffer).
      // Otherwise the response ends after its last event; the connection stays reusable
      // (asking uWS to close it here would drop the corked bytes).
      if (last === null) this.res.close();
      else this.res.end(`${this.queue.join('')}${sseControl(last)}`);
    });
    this.queue = [];
    this.releaseWaiters();
    this.onEnd(reason);
  }

  /** The client went away (uWS onAborted): the response may not be touched any more. */
  aborted(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue = [];
    this.releaseWaiters();
    this.onEnd('client_closed');
  }

  private drain(): boolean {
    if (this.ended) return true;
    // uWS flushes its own backlog only when written to: send the queue, or a comment line.
    const chunk = this.queue.length > 0 ? this.queue.join('') : SSE_DRAIN_NUDGE;
    this.queue = [];
    this.queuedBytes = 0;
    const written = this.res.write(chunk);
    this.heldByUws = written ? 0 : chunk.length + (chunk === SSE_DRAIN_NUDGE ? this.heldByUws : 0);
    if (written) this.releaseWaiters();
    return written;
  }
}
