import { AppError, type Kv } from '../../runtime/index.js';
import { WindowCounter } from './window-counter.js';

/**
 * Per-credential limit (requests per minute), counted in one-minute windows shared by every
 * control replica (WindowCounter). While Redis is lost the limiter lets requests pass (the
 * process reports degraded).
 */
export class RateLimiter {
  private readonly counter: WindowCounter;

  constructor(
    kv: Kv,
    private readonly perMinute: number,
  ) {
    this.counter = new WindowCounter(kv, 'rl', 'pass');
  }

  /** False with auth.rate_limit_per_minute = 0: callers skip check() (no promise per request). */
  get enabled(): boolean {
    return this.perMinute > 0;
  }

  async check(principalId: string): Promise<void> {
    if (this.perMinute <= 0) return;
    const { count, retryAfter } = await this.counter.increment(principalId);
    if (count !== null && count > this.perMinute) {
      throw new AppError('rate_limited', `rate limit of ${this.perMinute} requests per minute exceeded`, { headers: { 'retry-after': retryAfter } });
    }
  }
}
