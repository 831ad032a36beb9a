import type { Kv } from '../kv/index.js';
import { MemoryStreamBus } from './memory-stream-bus.js';
import { RedisStreamBus } from './redis-stream-bus.js';
import { STREAM_MAXLEN, type StreamBus } from './stream-bus.js';

/** Redis when the process has a key-value store, the in-process bus otherwise (role all). */
export function createStreamBus(kv: Kv): StreamBus {
  return kv.redis ? new RedisStreamBus(kv.redis, kv) : new MemoryStreamBus(STREAM_MAXLEN);
}
