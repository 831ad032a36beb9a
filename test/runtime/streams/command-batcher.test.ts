import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CommandBatcher, compareStreamIds } from '../../../runtime/index.js';

// The machine's Redis, keys under a random prefix deleted afterwards.
const test = suite('runtime/streams/command-batcher');
const prefix = `batcher-${randomBytes(4).toString('hex')}:`;
let redis: Redis;
let pipelines = 0;

test.before(async () => {
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  // Counts the pipelines the batcher sends (the real ioredis pipeline, counted on the way).
  const pipeline = redis.pipeline.bind(redis);
  redis.pipeline = ((...args: Parameters<Redis['pipeline']>) => {
    pipelines++;
    return pipeline(...args);
  }) as Redis['pipeline'];
  const multi = redis.multi.bind(redis) as (...args: unknown[]) => ReturnType<Redis['multi']>;
  redis.multi = ((...args: unknown[]) => {
    pipelines++;
    return multi(...args);
  }) as unknown as Redis['multi'];
});
test.after(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

test('an idle batcher sends at once; what is queued in the same tick while one is out leaves as ONE pipeline, in order', async () => {
  const batcher = new CommandBatcher(redis);
  const before = pipelines;
  const first = batcher.run((p) => p.xadd(`${prefix}t0`, '*', 'e', 'first'), 1);
  await Promise.resolve();
  assert.is(pipelines - before, 1, 'the first command did not wait for a tick');
  // 50 threads' writes in the same tick, while the first pipeline is in flight.
  const rest = Array.from({ length: 50 }, (_, i) => batcher.run((p) => p.xadd(`${prefix}t${i % 5}`, '*', 'e', `n${i}`).expire(`${prefix}t${i % 5}`, 60), 2, 1));
  const replies = await Promise.all([first, ...rest]);
  assert.is(pipelines - before, 2, 'one pipeline for everything queued in the tick behind the first');
  for (const reply of replies) for (const [error] of reply) assert.is(error, null);
  // Per thread, ids increase in the order the writes were queued.
  for (let t = 0; t < 5; t++) {
    const ids = rest.map((_, i) => i).filter((i) => i % 5 === t).map((i) => replies[i + 1]![0]![1] as string);
    assert.equal([...ids].sort(compareStreamIds), ids);
    const stored = await redis.xrange(`${prefix}t${t}`, '-', '+');
    assert.equal(stored.filter(([, f]) => f[1] !== 'first').map(([, f]) => f[1]), rest.map((_, i) => i).filter((i) => i % 5 === t).map((i) => `n${i}`));
  }
});

test('an urgent command leaves at once while a pipeline is in flight, with what was queued before it, in order', async () => {
  const batcher = new CommandBatcher(redis);
  const key = `${prefix}urgent`;
  const before = pipelines;
  const first = batcher.run((p) => p.xadd(key, '*', 'e', 'first'), 1);
  await Promise.resolve();
  assert.is(pipelines - before, 1);
  // In flight: a plain write waits for the tick's end, an urgent one does not — and takes it along.
  const plain = batcher.run((p) => p.xadd(key, '*', 'e', 'plain'), 1, 1);
  const urgent = batcher.run((p) => p.xadd(key, '*', 'e', 'urgent'), 1, 1, true);
  await Promise.resolve();
  assert.is(pipelines - before, 2, 'the urgent command was held to the tick end');
  await Promise.all([first, plain, urgent]);
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(pipelines - before, 2, 'the tick-end flush found nothing left to send');
  const stored = await redis.xrange(key, '-', '+');
  assert.equal(stored.map(([, f]) => f[1]), ['first', 'plain', 'urgent']);
  // Not in flight any more: a plain command goes at once again.
  await batcher.run((p) => p.xadd(key, '*', 'e', 'later'), 1, 1);
  assert.is(pipelines - before, 3);
});

test('a command that fails answers its own error; the others of the pipeline succeed', async () => {
  const batcher = new CommandBatcher(redis);
  await redis.set(`${prefix}plain`, 'x');
  const [bad, good] = await Promise.all([batcher.run((p) => p.xadd(`${prefix}plain`, '*', 'e', 'v'), 1), batcher.run((p) => p.set(`${prefix}ok`, '1'), 1)]);
  assert.ok(bad[0]![0] instanceof Error, 'XADD on a string key fails');
  assert.is(good[0]![0], null);
  assert.is(await redis.get(`${prefix}ok`), '1');
});

test('a blocked reader (another connection) gets every record of a batch in one reply, not the first alone', async () => {
  const reader = redis.duplicate();
  try {
    const key = `${prefix}visible`;
    const readerId = String(await reader.client('ID'));
    await redis.xadd(key, '*', 'e', 'start');
    for (const [label, records] of [['one publish of three events', [3]], ['three publishes in one tick', [1, 1, 1]]] as const) {
      const reading = reader.xread('BLOCK', 2000, 'STREAMS', key, '$');
      // This reader's read is blocked on the server (flag b) before the batch is sent.
      for (let i = 0; i < 200 && !/ flags=b /.test(String(await redis.client('LIST', 'ID', readerId))); i++) await new Promise((r) => setTimeout(r, 5));
      const batcher = new CommandBatcher(redis);
      const writes = records.map((n) =>
        batcher.run((p) => {
          for (let i = 0; i < n; i++) p.xadd(key, '*', 'e', `${label} ${i}`);
          p.expire(key, 60);
        }, n + 1, n),
      );
      const replies = await Promise.all(writes);
      for (const reply of replies) for (const [error] of reply) assert.is(error, null);
      const reply = (await reading) as Array<[string, Array<[string, string[]]>]>;
      assert.is(reply[0]![1].length, 3, `${label}: the blocked read was served with ${reply[0]![1].length} of 3 records`);
    }
  } finally {
    reader.disconnect();
  }
});

test.run();
