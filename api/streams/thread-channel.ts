import { STREAM_START_ID, type Uws } from '../../runtime/index.js';
import type { ChannelLink, Placement, SseSink, StreamSubscriber, WsPlacement } from './stream-subscriber.js';
import type { WsFormat } from './stream-frames.js';
import { ShardedFanOut } from './sharded-fanout.js';

/** A subscriber whose resume point lies beyond the channel's cursor: it joins once the cursor reaches it. */
export interface Waiting {
  subscriber: StreamSubscriber;
  after: string;
}

/**
 * The fan-out state of one thread in this process. `cursor` is the id of the last record
 * fanned out: every record up to it has been handed to the thread's fan-out (`fanOut`, which
 * delivers it to the subscribers attached at that time, some shards on later turns of the
 * loop), and every record after it will be delivered to those attached when it arrives.
 */
export class ThreadChannel implements ChannelLink {
  cursor = STREAM_START_ID;
  /** Subscribers counted in (joining, catching up, waiting or attached). */
  readonly members = new Set<StreamSubscriber>();
  waiting: Waiting[] = [];
  /** Settles once the cursor is the stream's last id and the follower reads after it. */
  ready: Promise<void> | null = null;

  readonly fanOut: ShardedFanOut;

  constructor(
    readonly threadId: string,
    app: Uws.TemplatedApp,
  ) {
    this.fanOut = new ShardedFanOut(app, `thread:${threadId}`);
  }

  joinWs(format: WsFormat): WsPlacement {
    return this.fanOut.joinWs(format);
  }

  leaveWs(placement: Placement, format: WsFormat): void {
    this.fanOut.leaveWs(placement, format);
  }

  joinSse(sink: SseSink): Placement {
    return this.fanOut.joinSse(sink);
  }

  leaveSse(placement: Placement, sink: SseSink): void {
    this.fanOut.leaveSse(placement, sink);
  }
}
