import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LiveTail } from '../../../actors/worker/live-tail.js';
import { type PublishOptions, type StreamEvent } from '../../../runtime/index.js';
import { MemoryStreamBus } from '../../../runtime/streams/memory-stream-bus.js';

// What a tail publishes together reaches every subscriber in one fan-out burst (one socket
// write each); what it publishes apart costs a burst each. The host hands the tail an attempt
// turn's messages one by one through a promise chain (attempt-runner.ts): the events of one
// turn must leave in one publish, the run's first one included (it is not held for a tick).
const test = suite('actors/worker/live-tail-batching');

/** The real in-process bus, with every publish call recorded (event types per call; its
 *  publishAnchored publishes through publish, so each call is recorded once). */
function recordingBus(): { bus: MemoryStreamBus; calls: string[][] } {
  const bus = new MemoryStreamBus(10_000);
  const calls: string[][] = [];
  const publish = bus.publish.bind(bus);
  bus.publish = (threadId: string, events: StreamEvent[]) => {
    calls.push(events.map((e) => e.type));
    return publish(threadId, events);
  };
  return { bus, calls };
}

test("a turn's user item (started, completed) leaves in ONE publish, the run's first", async () => {
  const { bus, calls } = recordingBus();
  const tail = new LiveTail(bus, 'run_1', 'thr_1', 1);
  const user = { id: 'itm_u', kind: 'message', content: { role: 'user', text: 'hi' } };
  // As the host's queue hands them over: one promise-chain step per message.
  let queue: Promise<void> = Promise.resolve();
  queue = queue.then(async () => tail.started(0, user));
  queue = queue.then(async () => tail.completed(0, user));
  await queue;
  await tail.flush();
  assert.equal(calls, [['item.started', 'item.completed']]);
});

test('the first event is not held for the next tick: it is published before any I/O', async () => {
  const { bus, calls } = recordingBus();
  const tail = new LiveTail(bus, 'run_2', 'thr_2', 1);
  tail.started(0, { id: 'itm_a', kind: 'message', content: { role: 'assistant', text: '' } });
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(calls, [['item.started']]);
  // Later events of a tick still coalesce (at the tick's end).
  tail.delta(0, { text: 'a' });
  tail.delta(0, { text: 'b' });
  await tail.flush();
  assert.equal(calls, [['item.started'], ['item.delta', 'item.delta']]);
});

test('the run\'s first delta (its first token) is not held for the tick either, and both firsts are published urgent; later deltas are not', async () => {
  const bus = new MemoryStreamBus(10_000);
  const calls: Array<{ types: string[]; urgent: boolean }> = [];
  const publish = bus.publish.bind(bus);
  bus.publish = (threadId: string, events: StreamEvent[], options?: PublishOptions) => {
    calls.push({ types: events.map((e) => e.type), urgent: options?.urgent === true });
    return publish(threadId, events);
  };
  const tail = new LiveTail(bus, 'run_u', 'thr_u', 1);
  const user = { id: 'itm_u', kind: 'message', content: { role: 'user', text: 'hi' } };
  tail.started(0, user);
  tail.completed(0, user);
  await new Promise<void>((resolve) => setImmediate(resolve));
  tail.started(1, { id: 'itm_a', kind: 'message', content: { role: 'assistant', text: '' } });
  await new Promise<void>((resolve) => setImmediate(resolve));
  // The assistant's item.started waited for the tick's end; the first delta does not.
  tail.delta(1, { text: 'a' });
  tail.delta(1, { text: 'b' });
  await Promise.resolve();
  await new Promise<void>((resolve) => process.nextTick(resolve));
  assert.equal(calls.map((c) => c.types), [['item.started', 'item.completed'], ['item.started'], ['item.delta', 'item.delta']]);
  tail.delta(1, { text: 'c' });
  await tail.flush();
  assert.equal(calls.map((c) => c.urgent), [true, false, true, false]);
});

/** The memory bus with every publish held until released, in call order (a slow store). */
function heldBus(): { bus: MemoryStreamBus; calls: string[][]; release(): void } {
  const bus = new MemoryStreamBus(10_000);
  const calls: string[][] = [];
  const held: Array<() => void> = [];
  const publish = bus.publish.bind(bus);
  bus.publish = (threadId: string, events: StreamEvent[]) => {
    calls.push(events.map((e) => e.type));
    // Applied to the stream at once (the store's order is the call order), answered later.
    const ids = publish(threadId, events);
    return new Promise((resolve) => held.push(() => resolve(ids)));
  };
  return { bus, calls, release: () => held.splice(0).forEach((go) => go()) };
}

test("a batch leaves without waiting for the previous batch's reply; snapshots still pair each batch's content with its last id", async () => {
  const { bus, calls, release } = heldBus();
  const tail = new LiveTail(bus, 'run_3', 'thr_3', 1);
  tail.started(0, { id: 'itm_a', kind: 'message', content: { role: 'assistant', text: '' } });
  await new Promise<void>((resolve) => setImmediate(resolve));
  tail.delta(0, { text: 'a' });
  await new Promise<void>((resolve) => setImmediate(resolve));
  // The first delta is on its way while item.started still waits for its answer.
  assert.equal(calls, [['item.started'], ['item.delta']]);
  tail.delta(0, { text: 'b' });
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(calls, [['item.started'], ['item.delta'], ['item.delta']]);
  release();
  await tail.flush();
  const page = await bus.read('thr_3', '0-0', 100);
  const ids = page.records.map((r) => r.id);
  assert.equal(page.records.map((r) => r.event.type), ['item.started', 'item.delta', 'item.delta']);
  // The last snapshot: the item as of the last batch, its first id the item.started's (which the
  // batch could not know when it left), its last id the batch's own.
  const snapshot = await bus.getTail('run_3');
  assert.is(snapshot?.last_stream_id, ids[2]);
  assert.equal(snapshot?.items.map((i) => [i.first_stream_id, i.last_stream_id, (i.content as { text: string }).text]), [[ids[0], ids[2], 'ab']]);
  // And the items the checkpoint commits carry the same ids.
  tail.completed(0, { id: 'itm_a', kind: 'message', content: { role: 'assistant', text: 'ab' } });
  release();
  const flushed = tail.flush();
  await new Promise<void>((resolve) => setImmediate(resolve));
  release();
  await flushed;
  const rows = tail.uncommittedBelow(1);
  assert.is(rows[0]?.first_stream_id, ids[0]);
});

test('a batch whose successor already left writes no snapshot of its own: the successor\'s covers it (one snapshot per burst)', async () => {
  const { bus, release } = heldBus();
  const snapshots: Array<string | null> = [];
  const setTail = bus.setTail.bind(bus);
  bus.setTail = (snapshot) => {
    snapshots.push(snapshot.last_stream_id);
    return setTail(snapshot);
  };
  const tail = new LiveTail(bus, 'run_5', 'thr_5', 1);
  tail.started(0, { id: 'itm_a', kind: 'message', content: { role: 'assistant', text: '' } });
  await new Promise<void>((resolve) => setImmediate(resolve));
  tail.delta(0, { text: 'a' });
  await new Promise<void>((resolve) => setImmediate(resolve));
  tail.delta(0, { text: 'b' });
  await new Promise<void>((resolve) => setImmediate(resolve));
  // Three batches out, none answered: settled in order, only the last writes its snapshot
  // (after the anchor's, "nothing yet at 0-0", which the first publish carries).
  release();
  await tail.flush();
  const ids = (await bus.read('thr_5', '0-0', 100)).records.map((r) => r.id);
  assert.equal(snapshots, ['0-0', ids[2]]);
  const snapshot = await bus.getTail('run_5');
  assert.equal(snapshot?.items.map((i) => [i.first_stream_id, i.last_stream_id, (i.content as { text: string }).text]), [[ids[0], ids[2], 'ab']]);
  // A batch alone (its predecessors answered) writes its own.
  tail.delta(0, { text: 'c' });
  const flushed = tail.flush();
  await new Promise<void>((resolve) => setImmediate(resolve));
  release();
  await flushed;
  assert.is(snapshots.length, 3);
  assert.is(((await bus.getTail('run_5'))?.items[0]?.content as { text: string } | undefined)?.text, 'abc');
});

test('an answer that arrives after the attempt was discarded writes no snapshot', async () => {
  const { bus, release } = heldBus();
  const tail = new LiveTail(bus, 'run_4', 'thr_4', 1);
  tail.started(0, { id: 'itm_a', kind: 'message', content: { role: 'assistant', text: '' } });
  await new Promise<void>((resolve) => setImmediate(resolve));
  tail.delta(0, { text: 'a' });
  await new Promise<void>((resolve) => setImmediate(resolve));
  // The run's next attempt anchors the run's tail while this one's answers are still out.
  tail.discard();
  await bus.setTail({ run_id: 'run_4', attempt: 2, items: [], last_stream_id: '0-0' });
  release();
  await tail.flush();
  assert.equal(await bus.getTail('run_4'), { run_id: 'run_4', attempt: 2, items: [], last_stream_id: '0-0' });
});

test.run();
