import type { Uws } from '../../runtime/index.js';
import { wsControl, type ControlEvent, type EncodedRecord, type WsFormat } from './stream-frames.js';
import type { StreamGrant } from './stream-access.js';
import type { ChannelLink, FinishReason, StreamSubscriber, WsPlacement } from './stream-subscriber.js';

/** WebSocket close codes of the stream (4000–4999 are the application's own). */
export const WS_CLOSE = {
  shutdown: 1001,
  backpressure: 1008,
  internal: 1011,
  tryAgainLater: 1013,
  reset: 4000,
} as const;

const SEND_DROPPED = 2;
/** Backlog below which a paused replay resumes. */
const WS_DRAIN_MARK = 64 * 1024;
/** What uWS reports for a socket that ended without a close frame. */
const ABNORMAL_CLOSURE = 1006;

/** What a stream WebSocket carries from the upgrade to its close. */
export interface WsUserData {
  readonly grant: StreamGrant;
  readonly format: WsFormat;
  readonly requestId: string;
  readonly openedAt: number;
  subscriber: WsSubscriber | null;
}

/** The control event a finishing WebSocket gets before its close frame, and that frame. */
function goodbye(reason: FinishReason): { event: ControlEvent | null; code: number; message: string } {
  switch (reason) {
    case 'trimmed':
      return { event: { type: 'stream.reset', reason: 'trimmed', message: 'events after the resume point were trimmed: re-read GET /runs/{id}/items and resume after its resume_after' }, code: WS_CLOSE.reset, message: 'stream reset: re-read items' };
    case 'kv_lost':
      return { event: { type: 'stream.error', code: 'unavailable', reason: 'kv_lost', message: 'the key-value store is unavailable; reconnect later and resume after the last id' }, code: WS_CLOSE.tryAgainLater, message: 'key-value store unavailable; try again later' };
    case 'shutdown':
      return { event: null, code: WS_CLOSE.shutdown, message: 'server shutting down' };
    case 'internal':
      return { event: null, code: WS_CLOSE.internal, message: 'stream failed; reconnect' };
    case 'backpressure':
    case 'abnormal':
    case 'client_closed':
      return { event: null, code: WS_CLOSE.backpressure, message: 'client too slow' };
    default: {
      const never: never = reason;
      return never;
    }
  }
}

/**
 * One stream WebSocket. Live records arrive through the thread's uWS topic for its frame
 * format (published once per record for all subscribers); replayed records and control events
 * are sent to it alone. uWS bounds its backlog (maxBackpressure) and closes it past that
 * (closeOnBackpressureLimit); a direct send that is dropped closes it too.
 */
export class WsSubscriber implements StreamSubscriber {
  readonly transport = 'ws' as const;
  private ended = false;
  /** Why the server ended it (reported by the close handler); null: the client closed. */
  private reason: FinishReason | null = null;
  private drainWaiters: Array<() => void> = [];
  private placement: WsPlacement | null = null;

  constructor(
    private readonly ws: Uws.WebSocket<WsUserData>,
    private readonly format: WsFormat,
  ) {}

  get closed(): boolean {
    return this.ended;
  }

  sendRecord(record: EncodedRecord): void {
    this.send(this.format === 'msgpack' ? record.msgpack() : record.wsJson());
  }

  sendControl(event: ControlEvent): void {
    this.send(wsControl(event, this.format));
  }

  heartbeat(): void {
    // uWS sends pings (sendPingsAutomatically).
  }

  attach(link: ChannelLink): void {
    if (this.ended || this.placement) return;
    // Placement and subscription in one synchronous step (the fan-out's exactly-once rule).
    this.placement = link.joinWs(this.format);
    this.ws.subscribe(this.placement.topic);
  }

  detach(link: ChannelLink): void {
    // uWS drops a closed socket's topics itself (an open one is only detached when it closes);
    // the channel only needs its shard's count back.
    if (this.placement) link.leaveWs(this.placement, this.format);
    this.placement = null;
  }

  bufferedBytes(): number {
    return this.ended ? 0 : this.ws.getBufferedAmount();
  }

  whenDrained(): Promise<void> {
    if (this.ended || this.ws.getBufferedAmount() === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** From the drain handler: uWS wrote some of the backlog. */
  drained(): void {
    if (this.ended || this.ws.getBufferedAmount() > WS_DRAIN_MARK) return;
    this.releaseWaiters();
  }

  private releaseWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  finish(reason: FinishReason): void {
    if (this.ended) return;
    this.reason = reason;
    const { event, code, message } = goodbye(reason);
    if (event) this.send(wsControl(event, this.format));
    if (this.ended) return; // the goodbye itself overflowed the backlog and closed it
    this.ended = true;
    // end() sends a close frame; a client too slow to read it is cut off without one.
    if (reason === 'backpressure') this.ws.close();
    else this.ws.end(code, message);
  }

  /** From the close handler: the socket is gone. Returns why it ended. */
  closedNow(code: number): FinishReason {
    this.ended = true;
    this.releaseWaiters();
    return this.reason ?? (code === ABNORMAL_CLOSURE ? 'abnormal' : 'client_closed');
  }

  private send(frame: string | Uint8Array): void {
    if (this.ended) return;
    let status = 0;
    this.ws.cork(() => (status = this.ws.send(frame, typeof frame !== 'string')));
    if (status === SEND_DROPPED && !this.ended) this.finish('backpressure');
  }
}
