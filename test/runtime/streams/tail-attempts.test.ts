import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openBothBuses, type BothBuses } from '../../support/stream-buses.js';

// A run's tail snapshot is what GET /runs/{id}/items serves as the running attempt's live tail.
// A zombie attempt (stopped past its lease, resumed before its next fenced write tells it so)
// must not replace its successor's snapshot: neither its snapshots nor its anchor. Both buses,
// the Redis one against the machine's Redis.
const test = suite('runtime/streams/tail-attempts');
let both: BothBuses;

test.before(async () => {
  both = await openBothBuses('tail-attempts');
});
test.after(async () => {
  await both?.close();
});

const item = (ordinal: number, text: string) => ({ ordinal, id: `itm_${ordinal}`, kind: 'message', content: { text } });

test('a snapshot of an earlier attempt is refused once a later attempt wrote one; the same or a later attempt replaces it', async () => {
  for (const { name, bus } of both.buses) {
    const run = `run_${name}_a`;
    assert.ok(await bus.setTail({ run_id: run, attempt: 2, items: [item(3, 'successor')], last_stream_id: '5-0' }), `${name}: first write`);
    assert.not.ok(await bus.setTail({ run_id: run, attempt: 1, items: [item(3, 'zombie')], last_stream_id: '6-0' }), `${name}: the zombie's write was taken`);
    assert.equal((await bus.getTail(run))?.items, [item(3, 'successor')], `${name}: the successor's snapshot was replaced`);
    assert.ok(await bus.setTail({ run_id: run, attempt: 2, items: [item(3, 'successor, later')], last_stream_id: '7-0' }), `${name}: the same attempt`);
    assert.ok(await bus.setTail({ run_id: run, attempt: 3, items: [], last_stream_id: '8-0' }), `${name}: a later attempt`);
    assert.is((await bus.getTail(run))?.attempt, 3, name);
  }
});

test("an earlier attempt's anchor is refused, and its events with it; a later attempt's anchor replaces the snapshot", async () => {
  for (const { name, bus } of both.buses) {
    const run = `run_${name}_b`;
    const thread = `thr_${name}_b`;
    const first = await bus.publishAnchored(thread, { run_id: run, attempt: 2 }, [{ type: 'item.started', run_id: run } as never]);
    assert.ok(first.anchored, `${name}: the successor's anchor`);
    assert.ok(first.ids[0], `${name}: the successor's event`);
    const zombie = await bus.publishAnchored(thread, { run_id: run, attempt: 1 }, [{ type: 'item.started', run_id: run } as never]);
    assert.not.ok(zombie.anchored, `${name}: the zombie's anchor was taken`);
    assert.equal(zombie.ids, [null], `${name}: the zombie's event was published`);
    assert.equal((await bus.read(thread, '0-0', 10)).records.map((r) => r.id), [first.ids[0]], `${name}: the stream holds the successor's event only`);
    const tail = await bus.getTail(run);
    assert.is(tail?.attempt, 2, name);
    const later = await bus.publishAnchored(thread, { run_id: run, attempt: 3 }, []);
    assert.ok(later.anchored, `${name}: a later attempt's anchor`);
    assert.is((await bus.getTail(run))?.attempt, 3, name);
  }
});

test("a zombie's fenced publishes are refused once a later attempt anchored — also after that attempt's seal cleared its tail; the successor's and unfenced publishes pass", async () => {
  for (const { name, bus } of both.buses) {
    const run = `run_${name}_c`;
    const thread = `thr_${name}_c`;
    const event = (text: string) => ({ type: 'item.delta', run_id: run, ordinal: 1, delta: { text } }) as never;
    const zombie = { run_id: run, attempt: 1 };
    const successor = { run_id: run, attempt: 2 };
    // Before the successor exists, the first attempt publishes as ever.
    assert.ok((await bus.publishAnchored(thread, zombie, [event('one')])).ids[0], `${name}: attempt 1 anchored`);
    assert.ok((await bus.publish(thread, [event('two')], { fence: zombie }))[0], `${name}: attempt 1 publishes`);
    // The successor's first event (its tail.reset) anchors: the fence rises to attempt 2.
    const reset = await bus.publishAnchored(thread, successor, [{ type: 'tail.reset', run_id: run, ordinal: 1, attempt: 2 } as never]);
    assert.ok(reset.anchored && reset.ids[0], `${name}: the successor's reset`);
    assert.equal(await bus.publish(thread, [event('zombie'), event('zombie 2')], { fence: zombie }), [null, null], `${name}: the zombie published after the reset`);
    assert.ok((await bus.publish(thread, [event('three')], { fence: successor }))[0], `${name}: the successor publishes`);
    // Its seal clears the snapshot; the fence stays.
    await bus.clearTail(run);
    assert.is(await bus.getTail(run), null, name);
    assert.equal(await bus.publish(thread, [event('zombie 3')], { fence: zombie }), [null], `${name}: the zombie published after the seal`);
    // Events that are not an attempt's (thread events) are not fenced.
    assert.ok((await bus.publish(thread, [{ type: 'run.status', run_id: run, status: 'completed' } as never]))[0], name);
    const texts = (await bus.read(thread, '0-0', 20)).records.map((r) => (r.event as unknown as { delta?: { text: string }; type: string }).delta?.text ?? r.event.type);
    assert.equal(texts, ['one', 'two', 'tail.reset', 'three', 'run.status'], name);
  }
});

test.run();
