import { createServer, connect, type Server, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, createRedisKv, type Kv } from '../../../runtime/index.js';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server.js';

// A subscriber connection closed while a SUBSCRIBE it sent on reconnecting is unanswered must
// not leave a rejected promise nobody holds: in a service that is an unhandled rejection and
// the process ends. A CI run's rate-limit test died this way in its teardown: Redis had just
// come back, the cache bus's subscriber reconnected, and the service closed it as Redis was
// stopped. ioredis's own resubscription (autoResubscribe) holds no handler; ours does.
const test = suite('runtime/kv/kv-reconnect');
let redis: PrivateRedis;
let kv: Kv;
let proxy: Server;
const sockets = new Set<Socket>();
let holdRepliesAfterSubscribe = false;

test.before(async () => {
  redis = await startPrivateRedis();
  // A proxy to the real Redis that can drop every connection and, once told, hold back the
  // answers to a connection once it has sent SUBSCRIBE (Redis got it; the client never hears).
  proxy = createServer((client) => {
    const upstream = connect(redis.port, '127.0.0.1');
    sockets.add(client).add(upstream);
    let holding = false;
    client.on('data', (chunk) => {
      if (holdRepliesAfterSubscribe && /subscribe/i.test(chunk.toString('latin1'))) holding = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => void (holding || client.write(chunk)));
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as { port: number }).port;
  kv = createRedisKv({ url: `redis://127.0.0.1:${port}`, prefix: 'kv-reconnect:', logger: createLogger({ level: 'fatal' }) });
});
test.after(async () => {
  await kv?.close();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
  await redis?.stop();
});

test('a subscriber closed while its resubscription after a reconnect is unanswered leaves no unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const copy = kv.duplicate()!;
    await new Promise<void>((resolve) => (copy.status === 'ready' ? resolve() : copy.once('ready', () => resolve())));
    await copy.subscribe('kv-reconnect:a', 'kv-reconnect:b');
    // What a subscriber does (CacheBus): subscribe again on every 'ready', with a handler.
    const ours: Array<Promise<unknown>> = [];
    const reconnected = new Promise<void>((resolve) =>
      copy.once('ready', () => {
        ours.push(copy.subscribe('kv-reconnect:a', 'kv-reconnect:b').catch((e: Error) => e.message));
        setTimeout(() => {
          copy.disconnect(false);
          resolve();
        }, 100);
      }),
    );
    holdRepliesAfterSubscribe = true;
    for (const s of sockets) s.destroy();
    sockets.clear();
    await reconnected;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await Promise.all(ours), ['Connection is closed.'], 'our own subscription was sent and was answered by the close');
    assert.equal(unhandled.map((e) => String(e)), []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test.run();
