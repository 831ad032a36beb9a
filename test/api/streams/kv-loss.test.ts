import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server.js';
import { SseClient, WsClient } from './stream-clients.js';
import { sendMessage, startStreamFixture, textsFromEvents, waitSealed, type StreamFixture } from './stream-fixture.js';

// Losing Redis during a run: open streams end with a reason, new ones answer 503 while REST
// keeps working; when Redis is back, streams work again without a restart, and resuming from
// ids recorded on items works.
const test = suite('api/streams/kv-loss');
let redis: PrivateRedis;
let f: StreamFixture;
const auth = () => ({ authorization: `Bearer ${f.apiKey}` });

test.before(async () => {
  redis = await startPrivateRedis();
  f = await startStreamFixture({ kvUrl: redis.url, tokens: 150, tokenDelayMs: 10 });
});

test.after(async () => {
  await f?.stop();
  await redis?.stop();
});

async function until<T>(probe: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met: ${JSON.stringify(value)?.slice(0, 200)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function openStatus(): Promise<{ status: number; retryAfter: string | undefined; code: string | undefined }> {
  const sse = await SseClient.open(f.streamUrl(), auth());
  if (sse.status === 200) {
    sse.close();
    return { status: 200, retryAfter: undefined, code: undefined };
  }
  await sse.waitEnded();
  return { status: sse.status, retryAfter: sse.headers['retry-after'] as string | undefined, code: JSON.parse(sse.body).error?.code };
}

test('Redis stopped mid-run: streams end with a reason, new ones get 503, REST keeps working', async () => {
  const sse = await SseClient.open(f.streamUrl(), auth());
  const ws = await WsClient.open(f.wsUrl(), { headers: auth() });
  await Promise.all([sse.waitFor((e) => e.type === 'stream.live'), ws.waitFor((e) => e.type === 'stream.live')]);
  const runId = await sendMessage(f, 'a long one');
  await sse.waitFor((e) => e.type === 'item.delta' && e.data.run_id === runId);
  await redis.stop();
  const error = await sse.waitFor((e) => e.type === 'stream.error');
  assert.is(error.data.reason, 'kv_lost');
  await sse.waitEnded();
  await ws.waitEnded();
  assert.is(ws.closeCode, 1013);
  assert.match(ws.closeReason, /try again later/);
  const refused = await openStatus();
  assert.equal(refused, { status: 503, retryAfter: '5', code: 'unavailable' });
  const ready = await f.client.get('/readyz');
  assert.is(ready.status, 200);
  assert.equal(ready.body.degraded, ['redis']);
  assert.is((await f.client.get(`/api/v1/runs/${runId}`)).status, 200);
  await waitSealed(f, runId);
  const items = (await f.client.get(`/api/v1/runs/${runId}/items`)).body.items as any[];
  assert.ok(items.length > 0, 'the run committed its items without Redis');
});

test('Redis back: streams work again without a restart; ids recorded on items resume', async () => {
  await redis.start();
  await until(openStatus, (r) => r.status === 200);
  const runs = (await f.client.get(`/api/v1/runs?thread_id=${f.threadId}`)).body.items as any[];
  const page = (await f.client.get(`/api/v1/runs/${runs[0].id}/items`)).body;
  const recorded = (page.items as any[]).map((i) => i.last_stream_id).filter(Boolean).at(-1) ?? page.resume_after;
  assert.match(recorded, /^\d+-\d+$/);
  const sse = await SseClient.open(f.streamUrl(f.threadId, `after=${recorded}`), auth());
  const ws = await WsClient.open(f.wsUrl(), { headers: { ...auth(), 'last-event-id': recorded }, protocols: ['svc.msgpack.v1'] });
  await Promise.all([sse.waitFor((e) => e.type === 'stream.live'), ws.waitFor((e) => e.type === 'stream.live')]);
  const runId = await sendMessage(f, 'after the outage');
  await waitSealed(f, runId);
  const items = (await f.client.get(`/api/v1/runs/${runId}/items`)).body.items as any[];
  for (const client of [sse, ws]) {
    await client.waitFor((e) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed');
    const texts = textsFromEvents(client.events, runId);
    for (const item of items.filter((i) => typeof i.content?.text === 'string')) assert.is(texts.get(item.ordinal), item.content.text);
  }
  assert.equal(ws.records().map((e) => e.id), sse.records().map((e) => e.id));
  sse.close();
  ws.close();
});

test.run();
