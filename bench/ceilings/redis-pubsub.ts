// Ceiling: Redis delivery latency, one message in flight at a time. PUBLISH→message is the
// floor under the service's cross-process wake-ups; XADD→XREAD BLOCK is the floor under a
// live thread stream (the host XADDs, control processes block-read and fan out).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { summarizeLatency, type BenchContext, type Figures, type Scenario } from '../scenario.js';

const MAX_SAMPLES = 10_000;
const BLOCK_MS = 1_000;

function connect(ctx: BenchContext, role: string): Redis {
  // maxRetriesPerRequest 1 and a command timeout (above XREAD's BLOCK_MS): a missing or
  // unresponsive Redis fails the scenario in seconds instead of waiting for the budget.
  const redis = new Redis(ctx.urls.redis, {
    maxRetriesPerRequest: 1,
    commandTimeout: BLOCK_MS + 4_000,
    connectionName: `bench-${role}`,
  });
  redis.on('error', (err: Error) => ctx.log(`redis ${role}: ${err.message}`));
  ctx.onCleanup(() => {
    redis.disconnect();
  });
  return redis;
}

/** Runs one round trip at a time until MAX_SAMPLES or ctx.seconds, whichever comes first. */
async function sampleLoop(ctx: BenchContext, roundTrip: (seq: number) => Promise<void>): Promise<number[]> {
  const deadline = performance.now() + ctx.seconds * 1000;
  const samples: number[] = [];
  for (let seq = 0; seq < MAX_SAMPLES && performance.now() < deadline && !ctx.signal.aborted; seq++) {
    const t0 = performance.now();
    await roundTrip(seq);
    samples.push(performance.now() - t0);
  }
  return samples;
}

async function publishLatency(ctx: BenchContext, channel: string): Promise<number[]> {
  const pub = connect(ctx, 'pub');
  const sub = connect(ctx, 'sub');
  let waiting: { seq: string; done: () => void } | undefined;
  sub.on('message', (_channel: string, message: string) => {
    if (waiting && message === waiting.seq) waiting.done();
  });
  await sub.subscribe(channel);
  return sampleLoop(ctx, async (seq) => {
    // The waiter is armed before PUBLISH, so a reply that beats the await is not lost.
    const received = new Promise<void>((resolve) => (waiting = { seq: String(seq), done: resolve }));
    await pub.publish(channel, String(seq));
    await received;
  });
}

async function streamLatency(ctx: BenchContext, key: string): Promise<number[]> {
  const writer = connect(ctx, 'xadd');
  const reader = connect(ctx, 'xread');
  ctx.onCleanup(async () => {
    await writer.del(key).catch(() => undefined);
  });
  // Reading from a seed entry's id (not '$') means an XADD that lands before the reader's
  // first XREAD is parked is still returned, so no wait for the reader to block is needed.
  let lastId = await writer.xadd(key, '*', 'seq', 'seed');
  if (lastId === null) throw new Error('XADD returned no id');
  const waiters = new Map<string, () => void>();
  let reading = true;
  // The reader loops on XREAD BLOCK from the last id it saw, as a stream fan-out does; an
  // entry added between two reads is returned by the next one, never skipped.
  void (async () => {
    while (reading && !ctx.signal.aborted) {
      // I/O edge: ioredis types XREAD replies loosely; the shape is [[key, [[id, [f, v]]]]].
      const reply = (await reader.xread('BLOCK', BLOCK_MS, 'STREAMS', key, lastId)) as
        | [string, [string, string[]][]][]
        | null;
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          lastId = id;
          waiters.get(fields[1] ?? '')?.();
        }
      }
    }
  })().catch(() => undefined); // disconnect in cleanup ends a parked XREAD with an error
  const samples = await sampleLoop(ctx, async (seq) => {
    const received = new Promise<void>((resolve) => waiters.set(String(seq), resolve));
    await writer.xadd(key, 'MAXLEN', '~', '1000', '*', 'seq', String(seq));
    await received;
    waiters.delete(String(seq));
  });
  reading = false;
  return samples;
}

async function run(ctx: BenchContext): Promise<Figures> {
  const prefix = `bench:${randomBytes(6).toString('hex')}`;
  const pubsub = summarizeLatency(await publishLatency(ctx, `${prefix}:channel`));
  const stream = summarizeLatency(await streamLatency(ctx, `${prefix}:stream`));
  return {
    publish_samples: pubsub.samples,
    publish_p50_ms: pubsub.p50_ms,
    publish_p99_ms: pubsub.p99_ms,
    stream_samples: stream.samples,
    stream_p50_ms: stream.p50_ms,
    stream_p99_ms: stream.p99_ms,
  };
}

export const redisPubsub: Scenario = { name: 'redis-pubsub', kind: 'ceiling', run };
