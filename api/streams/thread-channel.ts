import { STREAM_START_ID, type Uws } from '../../runtime/index.js';
import type { ChannelLink, SseSink, StreamSubscriber } from './stream-subscriber.js';
import type { WsFormat } from './stream-frames.js';
import { WsFanOut, type WsFanOutLimits, type WsPlacement } from './ws-fanout.js';

/** A subscriber whose resume point lies beyond the channel's cursor: it joins once the cursor reaches it. */
export interface Waiting {
  subscriber: StreamSubscriber;
  after: string;
}

/**
 * The fan-out state of one thread in this process. `cursor` is the id of the last record
 * fanned out: every record up to it has been delivered to the SSE subscribers attached at that
 * time and handed to the WebSocket fan-out (`ws`, which delivers it to those attached then,
 * some shards on later turns of the loop), and every record after it will be delivered to
 * those attached when it arrives.
 */
export class ThreadChannel implements ChannelLink {
  cursor = STREAM_START_ID;
  /** Subscribers counted in (joining, catching up, waiting or attached). */
  readonly members = new Set<StreamSubscriber>();
  readonly sse = new Set<SseSink>();
  waiting: Waiting[] = [];
  /** Settles once the cursor is the stream's last id and the follower reads after it. */
  ready: Promise<void> | null = null;

  readonly ws: WsFanOut;

  constructor(
    readonly threadId: string,
    app: Uws.TemplatedApp,
    limits?: WsFanOutLimits,
  ) {
    this.ws = new WsFanOut(app, `thread:${threadId}`, limits);
  }

  joinWs(format: WsFormat): WsPlacement {
    return this.ws.join(format);
  }

  leaveWs(placement: WsPlacement, format: WsFormat): void {
    this.ws.leave(placement, format);
  }
}
