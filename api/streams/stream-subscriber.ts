import type { ControlEvent, EncodedRecord, WsFormat } from './stream-frames.js';

/**
 * Why a subscription ended (logged, counted, and told to the client where it can be).
 * `abnormal`: a WebSocket ended without a close handshake — the client vanished, or uWS cut
 * it off past its backlog bound (closeOnBackpressureLimit; uWS does not say which).
 */
export type FinishReason = 'client_closed' | 'abnormal' | 'backpressure' | 'kv_lost' | 'shutdown' | 'trimmed' | 'internal';

/** Where a subscriber was placed in its thread's fan-out: the shard to leave. */
export interface Placement {
  readonly shard: number;
}

/** A WebSocket's placement, with the shard's topic for its frame format that it subscribes to. */
export interface WsPlacement extends Placement {
  readonly topic: string;
}

/** The live side of a thread channel that a subscriber joins once it has caught up. */
export interface ChannelLink {
  readonly threadId: string;
  /**
   * Places a WebSocket subscriber that has been sent every record up to the channel's cursor:
   * it subscribes to the returned topic in the same synchronous step (see ShardedFanOut).
   */
  joinWs(format: WsFormat): WsPlacement;
  leaveWs(placement: Placement, format: WsFormat): void;
  /** Places an SSE subscriber that has been sent every record up to the channel's cursor. */
  joinSse(sink: SseSink): Placement;
  leaveSse(placement: Placement, sink: SseSink): void;
}

/** What the hub needs from an SSE connection on the fan-out path. */
export interface SseSink {
  write(chunk: string): void;
}

/** One stream connection, SSE or WebSocket, as the hub drives it. */
export interface StreamSubscriber {
  readonly transport: 'sse' | 'ws';
  /** Set once the connection is gone or finishing: nothing more may be sent. */
  readonly closed: boolean;
  /** Sends a record straight to this subscriber (replay before it joins the live fan-out). */
  sendRecord(record: EncodedRecord): void;
  sendControl(event: ControlEvent): void;
  /** Joins the thread's live fan-out: from now on every published record reaches it. */
  attach(link: ChannelLink): void;
  /** Leaves the fan-out (the hub calls it before forgetting the subscriber). */
  detach(link: ChannelLink): void;
  /** Ends the connection: a last control event where the transport allows, then close. */
  finish(reason: FinishReason): void;
  /** Keeps an idle connection alive (an SSE comment; WebSocket pings are sent by uWS). */
  heartbeat(): void;
  /** Settles when the backlog falls below the drain mark, or the connection ends. */
  whenDrained(): Promise<void>;
  /** Bytes written to this client that it has not read yet (held by uWS or queued here). */
  bufferedBytes(): number;
}
