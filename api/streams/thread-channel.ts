import { STREAM_START_ID } from '../../runtime/index.js';
import type { ChannelLink, SseSink, StreamSubscriber } from './stream-subscriber.js';
import type { WsFormat } from './stream-frames.js';

/** A subscriber whose resume point lies beyond the channel's cursor: it joins once the cursor reaches it. */
export interface Waiting {
  subscriber: StreamSubscriber;
  after: string;
}

/**
 * The fan-out state of one thread in this process. `cursor` is the id of the last record
 * fanned out: every record up to it has been delivered to the subscribers attached at that
 * time, and every record after it will be delivered to those attached when it arrives.
 */
export class ThreadChannel implements ChannelLink {
  cursor = STREAM_START_ID;
  /** Subscribers counted in (joining, catching up, waiting or attached). */
  readonly members = new Set<StreamSubscriber>();
  readonly sse = new Set<SseSink>();
  waiting: Waiting[] = [];
  /** Settles once the cursor is the stream's last id and the follower reads after it. */
  ready: Promise<void> | null = null;

  constructor(readonly threadId: string) {}

  topic(format: WsFormat): string {
    return `thread:${this.threadId}:${format}`;
  }
}
