import { Packr } from 'msgpackr';
import type { StreamRecord } from '../../runtime/index.js';

/** WebSocket subprotocols naming the frame encoding (the client offers one; JSON by default). */
export const WS_PROTOCOL = { json: 'svc.json.v1', msgpack: 'svc.msgpack.v1' } as const;
export type WsFormat = keyof typeof WS_PROTOCOL;

/** Control events: produced by this process for one subscriber, never stored, no stream id. */
export type ControlEvent =
  | { type: 'stream.live'; after: string }
  | { type: 'stream.reset'; reason: 'trimmed'; message: string }
  | { type: 'stream.error'; code: 'unavailable'; reason: 'kv_lost' | 'shutdown' | 'internal'; message: string };

/** SSE reconnection delay (the `retry:` field) for EventSource-style clients. */
export const SSE_RETRY_MS = 2000;

// Standard MessagePack maps (msgpackr's record extension is off: any client library decodes it).
const packr = new Packr({ useRecords: false });

/**
 * One record of a thread's stream, encoded lazily and at most once per format however many
 * subscribers receive it (the fan-out's per-record cost is independent of subscriber count).
 */
export class EncodedRecord {
  private sseText: string | null = null;
  private wsText: string | null = null;
  private packed: Uint8Array | null = null;
  private eventJson: string | null;

  constructor(readonly record: StreamRecord) {
    this.eventJson = record.json ?? null;
  }

  get id(): string {
    return this.record.id;
  }

  private json(): string {
    return (this.eventJson ??= JSON.stringify(this.record.event));
  }

  /** `id:` is the stream id (resume with Last-Event-ID); `data:` one line of JSON (the event). */
  sse(): string {
    return (this.sseText ??= `id: ${this.record.id}\nevent: ${this.record.event.type}\ndata: ${this.json()}\n\n`);
  }

  /** A text frame `{"id": <stream id>, "event": <event>}`. */
  wsJson(): string {
    return (this.wsText ??= `{"id":${JSON.stringify(this.record.id)},"event":${this.json()}}`);
  }

  /** A binary frame: the same `{id, event}` map in MessagePack. */
  msgpack(): Uint8Array {
    return (this.packed ??= packr.pack({ id: this.record.id, event: this.record.event }));
  }
}

/** Control events carry no `id:` line, so an EventSource keeps its last stream id. */
export function sseControl(event: ControlEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export function wsControl(event: ControlEvent, format: WsFormat): string | Uint8Array {
  return format === 'msgpack' ? packr.pack({ event }) : JSON.stringify({ event });
}

/** The opening of every SSE response: the reconnection delay, and a comment that flushes headers. */
export const SSE_PREAMBLE = `retry: ${SSE_RETRY_MS}\n: stream open\n\n`;
export const SSE_HEARTBEAT = ': keep-alive\n\n';
/** Written when the socket drains with nothing queued: uWS flushes its buffer only on a write. */
export const SSE_DRAIN_NUDGE = ':\n';
