// The Redis stream follower (runtime/streams/redis-stream-follower.ts): a record costs one read
// of its own thread, however many threads the process follows (bells), and every record after a
// follow's cursor is delivered once, in order — through follows, unfollows and re-follows.
import type { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, createRedisKv, waitForKv, type Kv, type StreamEvent, type StreamRecord } from '../../../runtime/index.js';
import { RedisStreamBus } from '../../../runtime/streams/redis-stream-bus.js';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server.js';

const test = suite('runtime/streams/redis-stream-follower');
let redis: PrivateRedis;
let kv: Kv;
let bus: RedisStreamBus;

test.before(async () => {
  redis = await startPrivateRedis();
  kv = createRedisKv({ url: redis.url, prefix: 'follower:', logger: createLogger({ level: 'silent' }) });
  assert.is(await waitForKv(kv, 5000), 'ready');
  count(kv.redis!);
  const duplicate = kv.duplicate.bind(kv);
  kv.duplicate = () => {
    const connection = duplicate();
    return connection && count(connection);
  };
  bus = new RedisStreamBus(kv.redis!, kv);
});
test.after(async () => {
  await kv?.close();
  await redis?.stop();
});

const event = (n: number): StreamEvent => ({ type: 'item.delta', run_id: 'run_f', ordinal: 1, delta: { text: `${n}` } }) as unknown as StreamEvent;

/** Commands sent by this process's connections to the store, by name (ioredis sendCommand, counted on the way). */
const sent = new Map<string, number>();
function count(connection: Redis): Redis {
  const send = connection.sendCommand.bind(connection);
  connection.sendCommand = ((command: Parameters<Redis['sendCommand']>[0], ...rest: unknown[]) => {
    sent.set(command.name, (sent.get(command.name) ?? 0) + 1);
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as Redis['sendCommand'];
  return connection;
}
const calls = (name: string): number => sent.get(name) ?? 0;

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('records of one thread are read from that thread alone, once each, in order, among 300 followed threads', async () => {
  const seen = new Map<string, string[]>();
  const follower = bus.follower((threadId, records: StreamRecord[]) => seen.set(threadId, [...(seen.get(threadId) ?? []), ...records.map((r) => r.id)]), (error) => {
    throw error;
  });
  try {
    for (let i = 0; i < 300; i++) follower.follow(`quiet-${i}`, '0-0');
    // The follower's connections are up before the busy thread is followed.
    await new Promise((r) => setTimeout(r, 300));
    follower.follow('busy', '0-0');
    // Every follow's first read (after its subscription) has gone out.
    await new Promise((r) => setTimeout(r, 200));
    const xreads = calls('xread');
    const xranges = calls('xrange');
    const published: string[] = [];
    // One at a time, each delivered before the next is published: its bell, not the
    // once-a-second sweep (nor, before the bells, a blocking read that a newly followed thread
    // had to interrupt with CLIENT UNBLOCK, and waited up to 2 s for when that missed), brings it.
    for (let n = 0; n < 30; n++) {
      published.push(...((await bus.publish('busy', [event(n)])) as string[]));
      await until(() => (seen.get('busy') ?? []).length === published.length, 750, `record ${n} delivered by its bell`);
    }
    await until(() => (seen.get('busy') ?? []).length >= published.length, 5000, 'every record delivered');
    assert.equal(seen.get('busy'), published, 'once each, in stream order');
    assert.is([...seen.keys()].length, 1, 'no other thread delivered anything');
    // One read of the busy thread per bell at most (several bells can share one read); a blocking
    // read over all 301 threads per record, as before the bells, would show here as XREADs.
    assert.ok((calls('xrange')) - xranges <= published.length + 1, `xrange calls: ${(calls('xrange')) - xranges}`);
    assert.ok((calls('xread')) - xreads <= 4, `xread calls (the once-a-second sweep only): ${(calls('xread')) - xreads}`);
  } finally {
    follower.close();
  }
});

test('a thread followed again after an unfollow gets the records after its new cursor, once', async () => {
  const got: string[] = [];
  const follower = bus.follower((threadId, records) => {
    if (threadId === 'again') got.push(...records.map((r) => r.id));
  }, () => undefined);
  try {
    const [a] = (await bus.publish('again', [event(1)])) as string[];
    follower.follow('again', a!);
    const [b] = (await bus.publish('again', [event(2)])) as string[];
    await until(() => got.length === 1, 3000, 'the record after the cursor');
    follower.unfollow('again');
    const [c] = (await bus.publish('again', [event(3)])) as string[];
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(got, [b], 'nothing delivered while not followed');
    follower.follow('again', b!);
    // Published before the follow's subscription is in place: found by its first read.
    const [d] = (await bus.publish('again', [event(4)])) as string[];
    await until(() => got.length === 3, 3000, 'the records after the new cursor');
    assert.equal(got, [b, c, d]);
  } finally {
    follower.close();
  }
});

test('a record whose bell is lost is still delivered by the sweep within about a second', async () => {
  const got: string[] = [];
  const follower = bus.follower((_, records) => got.push(...records.map((r) => r.id)), () => undefined);
  try {
    follower.follow('silent', '0-0');
    await new Promise((r) => setTimeout(r, 100));
    // Appended without a bell (as a process that predates the bells would).
    const id = await kv.redis!.xadd('follower:stream:silent', '*', 'e', JSON.stringify(event(1)));
    await until(() => got.length === 1, 2500, 'the sweep to read it');
    assert.equal(got, [id]);
  } finally {
    follower.close();
  }
});

test.run();
