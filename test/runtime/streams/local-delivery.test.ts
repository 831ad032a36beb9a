import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, createRedisKv, createStreamBus, waitForKv, type Kv, type StreamBus, type StreamEvent, type StreamFollower, type StreamRecord } from '../../../runtime/index.js';

// Local delivery (runtime/streams/redis-stream-bus.ts offer): what a process publishes to a
// thread its own fan-out follows reaches that follower when the publish answers, without waiting
// for the follower's XREAD — and only when nothing of another writer lies between what the
// follower delivered and those records, so every follower still sees the stream exactly once,
// in order. Against the machine's Redis (keys under a random prefix, deleted afterwards).
const test = suite('runtime/streams/local-delivery');
const prefix = `local-delivery-${randomBytes(4).toString('hex')}:`;
const logger = createLogger({ level: 'fatal' });
let kv: Kv;
let other: Kv;

test.before(async () => {
  kv = createRedisKv({ url: 'redis://127.0.0.1:6379', prefix, logger });
  other = createRedisKv({ url: 'redis://127.0.0.1:6379', prefix, logger });
  assert.is(await waitForKv(kv, 5000), 'ready');
  assert.is(await waitForKv(other, 5000), 'ready');
});
test.after(async () => {
  const keys = await kv.redis!.keys(`${prefix}*`);
  if (keys.length > 0) await kv.redis!.del(...keys);
  await kv.close();
  await other.close();
});

const event = (text: string): StreamEvent => ({ type: 'item.delta', run_id: 'run_x', ordinal: 1, delta: { text } }) as StreamEvent;
const texts = (records: StreamRecord[]) => records.map((r) => (r.event as unknown as { delta: { text: string } }).delta.text);

/** A follower that never reads (no connection of its own): what it gets, it got from a local offer. */
function followerWithoutReads(): { bus: StreamBus; seen: StreamRecord[]; follower: StreamFollower } {
  const bus = createStreamBus({ ...kv, duplicate: () => null });
  const seen: StreamRecord[] = [];
  const follower = bus.follower(
    (_thread, records) => seen.push(...records),
    (error) => assert.unreachable(String(error)),
  );
  return { bus, seen, follower };
}

test('records published to a followed thread reach the follower when the publish answers, with their stream ids, once', async () => {
  const { bus, seen, follower } = followerWithoutReads();
  const thread = 'thr_local_a';
  follower.follow(thread, '0-0');
  // Two publishes in one tick leave in one MULTI: the second's predecessor is the first's last record.
  const [first, second] = await Promise.all([bus.publish(thread, [event('a'), event('b')]), bus.publish(thread, [event('c')])]);
  assert.equal(texts(seen), ['a', 'b', 'c']);
  assert.equal(seen.map((r) => r.id), [...first, ...second]);
  assert.is(seen[0]!.json, JSON.stringify(event('a')));
  // The anchored publish (a tail's first) is offered the same way.
  const anchored = await bus.publishAnchored(thread, { run_id: 'run_x', attempt: 1 }, [event('d')]);
  assert.ok(anchored.anchored);
  assert.equal(texts(seen), ['a', 'b', 'c', 'd']);
  assert.is(seen[3]!.id, anchored.ids[0]);
  const stored = await kv.redis!.xrange(`${prefix}stream:${thread}`, '-', '+');
  assert.equal(stored.map(([id]) => id), seen.map((r) => r.id), 'delivered ids are the stream ids, in stream order');
});

test("a record of another writer between the follower's cursor and a publish stops the offer: nothing is delivered out of order", async () => {
  const { bus, seen, follower } = followerWithoutReads();
  const thread = 'thr_local_b';
  follower.follow(thread, '0-0');
  await bus.publish(thread, [event('mine 1')]);
  assert.equal(texts(seen), ['mine 1']);
  // Another process writes to the thread: this follower has not read it (it never reads here).
  await createStreamBus(other).publish(thread, [event('theirs')]);
  await bus.publish(thread, [event('mine 2')]);
  assert.equal(texts(seen), ['mine 1'], "the offer skipped the other writer's record");
  // A thread this process does not follow is not offered (and costs no extra read).
  await bus.publish('thr_local_unfollowed', [event('x')]);
  assert.equal(texts(seen), ['mine 1']);
});

test('two writers publishing concurrently: a reading follower delivers the whole stream exactly once, in stream order', async () => {
  const local = createStreamBus(kv);
  const remote = createStreamBus(other);
  const thread = 'thr_local_c';
  const seen: StreamRecord[] = [];
  const follower = local.follower(
    (_thread, records) => seen.push(...records),
    () => undefined,
  );
  follower.follow(thread, '0-0');
  const rounds = 150;
  for (let i = 0; i < rounds; i++) {
    // Interleaved in time on two connections; the local ones are offered, the remote ones read.
    await Promise.all([local.publish(thread, [event(`l${i}`)]), remote.publish(thread, [event(`r${i}`), event(`r${i}'`)]), i % 7 === 0 ? local.publish(thread, [event(`L${i}`)]) : null]);
  }
  const total = rounds * 3 + Math.ceil(rounds / 7);
  const deadline = Date.now() + 5000;
  while (seen.length < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 50)); // a duplicate would arrive now
  follower.close();
  const stored = await kv.redis!.xrange(`${prefix}stream:${thread}`, '-', '+');
  assert.is(stored.length, total);
  assert.equal(seen.map((r) => r.id), stored.map(([id]) => id), 'every record once, in stream order');
});

test.run();
