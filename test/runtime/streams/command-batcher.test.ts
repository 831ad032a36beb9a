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
  const rest = Array.from({ length: 50 }, (_, i) => batcher.run((p) => p.xadd(`${prefix}t${i % 5}`, '*', 'e', `n${i}`).expire(`${prefix}t${i % 5}`, 60), 2));
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

test('a command that fails answers its own error; the others of the pipeline succeed', async () => {
  const batcher = new CommandBatcher(redis);
  await redis.set(`${prefix}plain`, 'x');
  const [bad, good] = await Promise.all([batcher.run((p) => p.xadd(`${prefix}plain`, '*', 'e', 'v'), 1), batcher.run((p) => p.set(`${prefix}ok`, '1'), 1)]);
  assert.ok(bad[0]![0] instanceof Error, 'XADD on a string key fails');
  assert.is(good[0]![0], null);
  assert.is(await redis.get(`${prefix}ok`), '1');
});

test.run();
