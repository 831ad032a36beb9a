import { randomBytes } from 'node:crypto';
import * as assert from 'uvu/assert';
import { createLogger, createRedisKv, createStreamBus, waitForKv, type Kv, type StreamBus } from '../../runtime/index.js';
import { MemoryStreamBus } from '../../runtime/streams/memory-stream-bus.js';

/**
 * Both stream buses for a suite that checks one contract on each: the Redis bus against the
 * machine's Redis (keys under a random prefix, deleted by `close`) and the in-process one.
 */
export interface BothBuses {
  readonly buses: Array<{ name: string; bus: StreamBus }>;
  close(): Promise<void>;
}

export async function openBothBuses(name: string): Promise<BothBuses> {
  const prefix = `${name}-${randomBytes(4).toString('hex')}:`;
  const kv: Kv = createRedisKv({ url: 'redis://127.0.0.1:6379', prefix, logger: createLogger({ level: 'fatal' }) });
  assert.is(await waitForKv(kv, 5000), 'ready');
  return {
    buses: [
      { name: 'redis', bus: createStreamBus(kv) },
      { name: 'memory', bus: new MemoryStreamBus(1000) },
    ],
    close: async () => {
      const keys = await kv.redis!.keys(`${prefix}*`);
      if (keys.length > 0) await kv.redis!.del(...keys);
      await kv.close();
    },
  };
}
