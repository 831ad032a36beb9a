import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, createRedisKv, type Kv } from '../../../runtime/index.js';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

// A subscriber connection closed while a SUBSCRIBE it sent on reconnecting is unanswered must
// not leave a rejected promise nobody holds: in a service that is an unhandled rejection and
// the process ends. A CI run's rate-limit test died this way in its teardown: Redis had just
// come back, the cache bus's subscriber reconnected, and the service closed it as Redis was
// stopped. ioredis's own resubscription (autoResubscribe) holds no handler; ours does.
const test = suite('runtime/kv/kv-reconnect');
let redis: PrivateRedis;
let kv: Kv;
let proxy: TcpProxy;

test.before(async () => {
  redis = await startPrivateRedis();
  proxy = await startTcpProxy('127.0.0.1', redis.port);
  kv = createRedisKv({ url: `redis://127.0.0.1:${proxy.port}`, prefix: 'kv-reconnect:', logger: createLogger({ level: 'fatal' }) });
});
test.after(async () => {
  await kv?.close();
  await proxy?.close();
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
    // Redis receives the SUBSCRIBEs sent on reconnecting; the client never hears back.
    proxy.holdAnswersAfter(/subscribe/i);
    proxy.cut();
    proxy.restore();
    await reconnected;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await Promise.all(ours), ['Connection is closed.'], 'our own subscription was sent and was answered by the close');
    assert.equal(unhandled.map((e) => String(e)), []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test.run();
