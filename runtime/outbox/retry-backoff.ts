// Exponential backoff with jitter between delivery attempts, capped at one hour (spec 6, 8).
export const RETRY_BASE_SECONDS = 10;
export const RETRY_CAP_SECONDS = 3600;

/**
 * Seconds to wait after the given failed attempt (1-based): base·2^(n-1), capped, then "equal
 * jitter" (a random point in the upper half) so that rows failing together spread out, and
 * the result never exceeds the cap.
 */
export function retryDelaySeconds(attempt: number, random: () => number = Math.random): number {
  const exponential = Math.min(RETRY_CAP_SECONDS, RETRY_BASE_SECONDS * 2 ** Math.max(0, Math.min(attempt - 1, 20)));
  return Math.min(RETRY_CAP_SECONDS, Math.ceil(exponential / 2 + random() * (exponential / 2)));
}
