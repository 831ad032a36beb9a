import { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../../runtime/index.js';
import type { FinishReason, StreamSubscriber } from './stream-subscriber.js';

export interface StreamMetrics {
  readonly events: Counter;
  readonly finished: Counter<'reason'>;
  /** Sets where the gauges read the live subscribers from (read at scrape time only). */
  observe(subscribers: () => Iterable<StreamSubscriber>): void;
}

/**
 * Stream figures on the process registry. The gauges are computed when scraped, so the fan-out
 * path pays nothing for them: subscribers by transport, and the bytes buffered for clients
 * that have not read them yet (total and the largest single subscriber).
 */
export function createStreamMetrics(metrics: Metrics): StreamMetrics {
  let source: () => Iterable<StreamSubscriber> = () => [];
  const registers = [metrics.registry];
  const scan = (): { sse: number; ws: number; buffered: number; max: number } => {
    const out = { sse: 0, ws: 0, buffered: 0, max: 0 };
    for (const s of source()) {
      if (s.closed) continue;
      out[s.transport]++;
      const bytes = s.bufferedBytes();
      out.buffered += bytes;
      out.max = Math.max(out.max, bytes);
    }
    return out;
  };
  new Gauge({
    name: 'svc_stream_subscribers', help: 'Open thread stream connections', labelNames: ['transport'], registers,
    collect() {
      const figures = scan();
      this.set({ transport: 'sse' }, figures.sse);
      this.set({ transport: 'ws' }, figures.ws);
    },
  });
  new Gauge({ name: 'svc_stream_buffered_bytes', help: 'Bytes written to stream clients and not yet read by them', registers, collect() { this.set(scan().buffered); } });
  new Gauge({ name: 'svc_stream_buffered_bytes_max', help: 'Largest backlog of a single stream client, in bytes', registers, collect() { this.set(scan().max); } });
  return {
    events: new Counter({ name: 'svc_stream_events_total', help: 'Stream records fanned out (once per record, whatever the subscriber count)', registers }),
    finished: new Counter({ name: 'svc_stream_closed_total', help: 'Stream connections ended, by reason', labelNames: ['reason'], registers }),
    observe: (subscribers) => void (source = subscribers),
  };
}

export type { FinishReason };
