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
/** A hub over `bus`, as a serving process makes one (uWS stubbed: SSE subscribers only here). */
const hubOn = (bus: MemoryStreamBus): StreamHub => new StreamHub(app, bus, createLogger({ level: 'silent' }), createStreamMetrics(createMetrics({ role: 'test' })));
const event = (n: number): StreamEvent => ({ type: 'item.delta', run_id: 'run_1', ordinal: 1, delta: { text: `${n}` } }) as unknown as StreamEvent;

test('records published while the replay read is out are read again, not reported trimmed', async () => {
  const bus = new SlowReadBus(1000);
  const hub = hubOn(bus);
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
  const hub = hubOn(bus);
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

/** A memory bus that counts the hub's reads of the stream (its replay pages and last ids). */
class CountingBus extends MemoryStreamBus {
  reads = 0;
  lastIds = 0;
  override read(threadId: string, afterId: string, count: number): Promise<StreamPage> {
    this.reads++;
    return super.read(threadId, afterId, count);
  }
  override lastId(threadId: string): Promise<string | null> {
    this.lastIds++;
    return super.lastId(threadId);
  }
}

test('a subscription at the stream\'s end (no resume point) reads nothing more: it is live at once and gets what follows', async () => {
  const bus = new CountingBus(1000);
  const hub = hubOn(bus);
  try {
    await bus.publish('thr_3', [event(1), event(2)]);
    // What admission does for a request without a resume point: one read of the stream's end.
    const end = (await bus.lastId('thr_3'))!;
    bus.lastIds = 0;
    const subscriber = new Recorder();
    await hub.join('thr_3', subscriber, end, end);
    assert.is(bus.lastIds, 0, 'the channel starts at the end admission read');
    assert.is(bus.reads, 0, 'nothing to replay between the resume point and the cursor');
    assert.equal(subscriber.controls, [{ type: 'stream.live', after: end }]);
    const next = await bus.publish('thr_3', [event(3)]);
    assert.equal(subscriber.ids, next, 'only what was published after it subscribed');
    // A second subscriber resuming exactly at the channel's cursor: live, no read either.
    const second = new Recorder();
    await hub.join('thr_3', second, next[0]!);
    assert.is(bus.reads, 0);
    assert.equal(second.controls, [{ type: 'stream.live', after: next[0] }]);
    // One behind the cursor: replayed from the stream (a read), then live.
    const third = new Recorder();
    await hub.join('thr_3', third, end);
    assert.is(bus.reads, 1);
    assert.equal(third.ids, next);
    const last = await bus.publish('thr_3', [event(4)]);
    assert.equal(subscriber.ids, [...next, ...last]);
    assert.equal(second.ids, last);
    assert.equal(third.ids, [...next, ...last]);
  } finally {
    hub.close();
  }
});

test('a channel started at an end older than the stream\'s (records published since admission) delivers those records', async () => {
  const bus = new CountingBus(1000);
  const hub = hubOn(bus);
  try {
    await bus.publish('thr_4', [event(1)]);
    const end = (await bus.lastId('thr_4'))!;
    // Published between the admission's read and the join.
    const meanwhile = await bus.publish('thr_4', [event(2), event(3)]);
    const subscriber = new Recorder();
    await hub.join('thr_4', subscriber, end, end);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(subscriber.ids, meanwhile, 'the records after its resume point, once each, in order');
    assert.is(subscriber.finished, null);
  } finally {
    hub.close();
  }
});

test.run();
