// The stream hub's catch-up (StreamHub.catchUp): a replay read that the live fan-out overtakes
// is read again, not taken for trimming. CI saw kv-recovery end with `stream.reset trimmed` on
// an untrimmed stream under load: the replay's XRANGE answered before the worker's next records
// arrived, the fan-out advanced the cursor past them while the answer was on its way, and the
// hub compared the empty page with the new cursor.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StreamHub } from '../../../api/streams/stream-hub.js';
import { createStreamMetrics } from '../../../api/streams/stream-metrics.js';
import type { ControlEvent, EncodedRecord } from '../../../api/streams/stream-frames.js';
import type { ChannelLink, FinishReason, StreamSubscriber } from '../../../api/streams/stream-subscriber.js';
import { createLogger, createMetrics, type StreamEvent, type StreamPage, type Uws } from '../../../runtime/index.js';
import { MemoryStreamBus } from '../../../runtime/streams/memory-stream-bus.js';

const test = suite('api/streams/stream-hub-catchup');

/** A memory bus whose next read answers the stream as it was when the read was sent, later. */
class SlowReadBus extends MemoryStreamBus {
  gate: Promise<void> | null = null;
  override async read(threadId: string, afterId: string, count: number): Promise<StreamPage> {
    const page = await super.read(threadId, afterId, count);
    const gate = this.gate;
    this.gate = null;
    if (gate) await gate;
    return page;
  }
}

class Recorder implements StreamSubscriber {
  readonly transport = 'sse' as const;
  closed = false;
  readonly ids: string[] = [];
  readonly controls: ControlEvent[] = [];
  finished: FinishReason | null = null;
  link: ChannelLink | null = null;
  private readonly sink = { write: (chunk: string) => this.ids.push(...[...chunk.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!)) };
  sendRecord(record: EncodedRecord): void {
    this.ids.push(record.id);
  }
  sendControl(event: ControlEvent): void {
    this.controls.push(event);
  }
  private placement: ReturnType<ChannelLink['joinSse']> | null = null;
  attach(link: ChannelLink): void {
    this.link = link;
    this.placement = link.joinSse(this.sink);
  }
  detach(link: ChannelLink): void {
    if (this.placement) link.leaveSse(this.placement, this.sink);
  }
  finish(reason: FinishReason): void {
    this.finished = reason;
    this.closed = true;
  }
  heartbeat(): void {}
  async whenDrained(): Promise<void> {}
  bufferedBytes(): number {
    return 0;
  }
}

const app = { numSubscribers: () => 0, publish: () => true } as unknown as Uws.TemplatedApp;
const event = (n: number): StreamEvent => ({ type: 'item.delta', run_id: 'run_1', ordinal: 1, delta: { text: `${n}` } }) as unknown as StreamEvent;

test('records published while the replay read is out are read again, not reported trimmed', async () => {
  const bus = new SlowReadBus(1000);
  const hub = new StreamHub(app, bus, createLogger({ level: 'silent' }), createStreamMetrics(createMetrics({ role: 'test' })));
  try {
    const [first] = await bus.publish('thr_1', [event(1)]);
    let release!: () => void;
    bus.gate = new Promise<void>((r) => (release = r));
    const subscriber = new Recorder();
    const joined = hub.join('thr_1', subscriber, first!);
    // The replay's read is out (it saw nothing after `first`); the fan-out moves on meanwhile.
    await new Promise((r) => setTimeout(r, 10));
    const later = await bus.publish('thr_1', [event(2), event(3)]);
    release();
    await joined;
    assert.is(subscriber.finished, null, `finished: ${subscriber.finished}`);
    assert.equal(subscriber.ids, later, 'the records after the resume point, once each, in order');
    assert.is(subscriber.controls[0]?.type, 'stream.live');
    // Attached: what comes next arrives live, once.
    const next = await bus.publish('thr_1', [event(4)]);
    assert.equal(subscriber.ids, [...later, ...next]);
  } finally {
    hub.close();
  }
});

test('a resume point whose successors are gone is still reported trimmed', async () => {
  const bus = new MemoryStreamBus(2);
  const hub = new StreamHub(app, bus, createLogger({ level: 'silent' }), createStreamMetrics(createMetrics({ role: 'test' })));
  try {
    const [first] = await bus.publish('thr_2', [event(1)]);
    await bus.publish('thr_2', [event(2), event(3), event(4)]);
    const subscriber = new Recorder();
    await hub.join('thr_2', subscriber, first!);
    assert.is(subscriber.finished, 'trimmed');
  } finally {
    hub.close();
  }
});

test.run();
