import { AppError, type Kv } from '../../runtime/index.js';

/**
 * Per-credential fixed-window limit (requests per minute) kept in Redis, so every control
 * replica counts against one budget: one pipelined INCR + EXPIRE per request. While Redis is
 * lost the limiter lets requests pass (the process reports degraded). The in-process bus
 * (single `all` process) counts in memory.
 */
export class RateLimiter {
  private readonly memory = new Map<string, number>();
  private memoryWindow = 0;

  constructor(
    private readonly kv: Kv,
    private readonly perMinute: number,
  ) {}

  async check(principalId: string): Promise<void> {
    if (this.perMinute <= 0) return;
    const now = Date.now();
    const window = Math.floor(now / 60_000);
    const retryAfter = String(Math.max(1, Math.ceil(((window + 1) * 60_000 - now) / 1000)));
    const count = await this.increment(principalId, window);
    if (count !== null && count > this.perMinute) {
      throw new AppError('rate_limited', `rate limit of ${this.perMinute} requests per minute exceeded`, { headers: { 'retry-after': retryAfter } });
    }
  }

  private async increment(principalId: string, window: number): Promise<number | null> {
    if (!this.kv.redis) {
      if (window !== this.memoryWindow) {
        this.memory.clear();
        this.memoryWindow = window;
      }
      const next = (this.memory.get(principalId) ?? 0) + 1;
      this.memory.set(principalId, next);
      return next;
    }
    if (this.kv.state() !== 'ready') return null;
    const key = `${this.kv.prefix}rl:${principalId}:${window}`;
    try {
      const results = await this.kv.redis.multi().incr(key).expire(key, 120).exec();
      const value = results?.[0]?.[1];
      return typeof value === 'number' ? value : null;
    } catch {
      return null; // lost mid-request: let it pass
    }
  }
}
