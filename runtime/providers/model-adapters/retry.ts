// Repeats a model call after a retryable failure (429, 5xx, dropped connection, timeout),
// but only while the failed attempt had emitted nothing: once output reached the consumer a
// repeat would duplicate it, so the error passes through and the run engine decides.
import { modelError, MODEL_ERROR_CODES, type ModelError, type ModelEvent } from './model-events.js';

export interface RetryPolicy {
  max_retries: number;
  base_delay_ms: number;
  /** Cap of the backoff; a Retry-After above it is not waited for (the error passes through). */
  max_delay_ms: number;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<boolean>;
}

export const DEFAULT_RETRY_POLICY = { max_retries: 2, base_delay_ms: 500, max_delay_ms: 60_000 } as const;

export async function* withRetry(
  attempt: (n: number) => AsyncIterable<ModelEvent>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): AsyncGenerator<ModelEvent> {
  const sleep = policy.sleep ?? abortableSleep;
  for (let n = 0; ; n++) {
    let emitted = false;
    let delay: number | undefined;
    for await (const event of attempt(n)) {
      if (event.type === 'error' && !emitted && event.retryable && n < policy.max_retries) {
        delay = retryDelay(event, n, policy);
        if (delay !== undefined) break;
      }
      emitted = true;
      yield event;
    }
    if (delay === undefined) return;
    if (!(await sleep(delay, signal))) {
      yield modelError(MODEL_ERROR_CODES.cancelled, 'the model call was cancelled', false);
      return;
    }
  }
}

/** The vendor's Retry-After when given (undefined if above the cap), else exponential backoff with jitter. */
export function retryDelay(error: ModelError, attempt: number, policy: RetryPolicy): number | undefined {
  if (error.retry_after_ms !== undefined) return error.retry_after_ms <= policy.max_delay_ms ? error.retry_after_ms : undefined;
  const ceiling = Math.min(policy.max_delay_ms, policy.base_delay_ms * 2 ** attempt);
  // "Equal jitter": never less than half the step, so retries still spread out under load.
  return Math.round(ceiling / 2 + (ceiling / 2) * (policy.random ?? Math.random)());
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
