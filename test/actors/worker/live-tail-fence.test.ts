import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LiveTail } from '../../../actors/worker/live-tail.js';
import { openBothBuses, type BothBuses } from '../../support/stream-buses.js';

// A zombie attempt — its lease ran out while it was stopped or cut off from the database, the
// run continues elsewhere, it has not yet made the fenced write that would tell it — keeps
// streaming its model's output. Its tail's publishes are fenced by its attempt
// (PublishOptions.fence): once the successor's first event (its tail.reset, an anchored
// publish: AttemptRunner) is on the stream, nothing of the zombie follows it — also after the
// successor sealed the run. Both buses; the Redis one against the machine's Redis.
const test = suite('actors/worker/live-tail-fence');
let both: BothBuses;

test.before(async () => {
  both = await openBothBuses('live-tail-fence');
});
test.after(async () => {
  await both?.close();
});

const assistant = (id: string) => ({ id, kind: 'message', content: { role: 'assistant', text: '' } });

test("a zombie attempt's tail publishes nothing after its successor's tail.reset, nor after the successor's seal", async () => {
  for (const { name, bus } of both.buses) {
    const run = `run_${name}`;
    const thread = `thr_${name}`;
    const zombie = new LiveTail(bus, run, thread, 1);
    zombie.started(1, assistant('itm_z'));
    zombie.delta(1, { text: 'before ' });
    await zombie.flush();
    // The successor's first event: the anchored reset (as AttemptRunner publishes it).
    await bus.publishAnchored(thread, { run_id: run, attempt: 2 }, [{ type: 'tail.reset', run_id: run, ordinal: 1, attempt: 2 }]);
    // The zombie goes on streaming, unaware.
    zombie.delta(1, { text: 'after the reset ' });
    await zombie.flush();
    const successor = new LiveTail(bus, run, thread, 2);
    successor.started(1, assistant('itm_s'));
    successor.delta(1, { text: 'live' });
    await successor.flush();
    await bus.clearTail(run); // the successor's seal
    zombie.delta(1, { text: 'after the seal' });
    await zombie.flush();
    const seen = (await bus.read(thread, '0-0', 50)).records.map((r) => {
      const e = r.event as unknown as { type: string; delta?: { text: string }; item?: { id: string } };
      return `${e.type}${e.delta ? `:${e.delta.text}` : ''}${e.item ? `:${e.item.id}` : ''}`;
    });
    assert.equal(seen, ['item.started:itm_z', 'item.delta:before ', 'tail.reset', 'item.started:itm_s', 'item.delta:live'], name);
    // Nor did a snapshot of the zombie's come back after the seal cleared the successor's.
    assert.is(await bus.getTail(run), null, `${name}: the zombie's snapshot`);
    zombie.discard();
  }
});

test.run();
