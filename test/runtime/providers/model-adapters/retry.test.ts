import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { modelError, type ModelEvent } from '../../../../runtime/providers/model-adapters/model-events.js';
import { retryDelay, withRetry, type RetryPolicy } from '../../../../runtime/providers/model-adapters/retry.js';
import { retryAfterMs } from '../../../../runtime/providers/model-adapters/upstream-errors.js';
import { collect } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/retry');

const rateLimited = (retry_after_ms?: number) => modelError('rate_limited', 'HTTP 429', true, { retry_after_ms, status: 429 });
const finish: ModelEvent = { type: 'finish', reason: 'stop' };

function policy(delays: number[], extra: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    max_retries: 3,
    base_delay_ms: 100,
    max_delay_ms: 10_000,
    random: () => 1,
    sleep: async (ms) => {
      delays.push(ms);
      return true;
    },
    ...extra,
  };
}

async function* scripted(attempts: ModelEvent[][], n: number): AsyncGenerator<ModelEvent> {
  yield* attempts[Math.min(n, attempts.length - 1)] ?? [];
}

test('waits exactly the Retry-After hint, else exponential backoff, between attempts', async () => {
  const delays: number[] = [];
  const attempts = [[rateLimited(7000)], [modelError('upstream_unavailable', 'HTTP 503', true)], [modelError('upstream_unavailable', 'x', true)], [finish]];
  const events = await collect(withRetry((n) => scripted(attempts, n), policy(delays)));
  assert.equal(events, [finish]);
  assert.equal(delays, [7000, 200, 400]);
});

test('never retries once an attempt emitted output', async () => {
  const delays: number[] = [];
  const attempts: ModelEvent[][] = [[{ type: 'text_delta', text: 'a' }, rateLimited(10)], [finish]];
  const events = await collect(withRetry((n) => scripted(attempts, n), policy(delays)));
  assert.equal(events, [{ type: 'text_delta', text: 'a' }, rateLimited(10)]);
  assert.equal(delays, []);
});

test('passes non-retryable errors, and Retry-After hints above the cap, straight through', async () => {
  const delays: number[] = [];
  const fatal = modelError('invalid_request', 'HTTP 400', false, { status: 400 });
  assert.equal(await collect(withRetry((n) => scripted([[fatal]], n), policy(delays))), [fatal]);
  assert.equal(await collect(withRetry((n) => scripted([[rateLimited(60_000)]], n), policy(delays))), [rateLimited(60_000)]);
  assert.equal(delays, []);
});

test('stops after max_retries and yields the last error', async () => {
  const delays: number[] = [];
  const events = await collect(withRetry((n) => scripted([[rateLimited(1)]], n), policy(delays, { max_retries: 2 })));
  assert.equal(events, [rateLimited(1)]);
  assert.is(delays.length, 2);
});

test('an abort during the backoff sleep ends with `cancelled` at once', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  const started = Date.now();
  const attempts = [[rateLimited(5000)], [finish]];
  const out = await collect(withRetry((n) => scripted(attempts, n), { max_retries: 2, base_delay_ms: 100, max_delay_ms: 10_000 }, controller.signal));
  assert.ok(Date.now() - started < 1000);
  assert.is(out.length, 1);
  assert.ok(out[0]?.type === 'error' && out[0].code === 'cancelled');
});

test('backoff keeps at least half of each step (equal jitter) and respects the cap', () => {
  const p = { max_retries: 5, base_delay_ms: 1000, max_delay_ms: 3000, random: () => 0 };
  const err = modelError('upstream_unavailable', 'x', true);
  assert.equal([0, 1, 2, 3].map((n) => retryDelay(err, n, p)), [500, 1000, 1500, 1500]);
});

test('reads retry-after-ms, Retry-After seconds and HTTP dates, and Google RetryInfo', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.is(retryAfterMs(new Headers({ 'retry-after-ms': '1234.4', 'retry-after': '9' }), undefined, now), 1234);
  assert.is(retryAfterMs(new Headers({ 'retry-after': '3' }), undefined, now), 3000);
  assert.is(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), undefined, now), 5000);
  const google = { error: { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }] } };
  assert.is(retryAfterMs(new Headers(), google, now), 37_000);
  assert.is(retryAfterMs(new Headers(), undefined, now), undefined);
});

test.run();
