import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineFor } from '../../../actors/index.js';
import { STREAM_MAXLEN, type StreamEvent } from '../../../runtime/index.js';
import { SseClient, WsClient, type SeenEvent } from './stream-clients.js';
import { sendMessage, startStreamFixture, textsFromEvents, waitSealed, type StreamFixture } from './stream-fixture.js';

// Reconnecting mid-run with the last id seen loses and repeats nothing, on both transports,
// through the Redis bus (XRANGE replay, then the shared XREAD fan-out).
const test = suite('api/streams/reconnect');
let f: StreamFixture;
const auth = () => ({ authorization: `Bearer ${f.apiKey}` });

test.before(async () => {
  // ~60 deltas 15 ms apart: long enough to disconnect and come back in the middle.
  f = await startStreamFixture({ kvUrl: 'redis://127.0.0.1:6379', tokens: 60, tokenDelayMs: 15 });
});

test.after(async () => {
  await f?.stop();
});

const ids = (events: SeenEvent[]) => events.filter((e) => e.id !== null).map((e) => e.id!);
const deltasOf = (client: { events: SeenEvent[] }, runId: string) => client.events.filter((e) => e.type === 'item.delta' && e.data.run_id === runId).length;
const completedRun = (runId: string) => (e: SeenEvent) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed';

async function until(probe: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function assertSameAsWitness(first: SeenEvent[], second: SeenEvent[], witness: SeenEvent[], runId: string): Promise<void> {
  const joined = [...ids(first), ...ids(second)];
  assert.is(new Set(joined).size, joined.length, 'no record twice');
  assert.equal(joined, ids(witness), 'exactly the records of a client that never left, in order');
  const items = (await f.client.get(`/api/v1/runs/${runId}/items`)).body.items as any[];
  const texts = textsFromEvents([...first, ...second], runId);
  for (const item of items.filter((i) => typeof i.content?.text === 'string')) assert.is(texts.get(item.ordinal), item.content.text);
}

test('SSE: reconnecting with Last-Event-ID mid-run loses and duplicates nothing', async () => {
  const witness = await SseClient.open(f.streamUrl(), auth());
  await witness.waitFor((e) => e.type === 'stream.live');
  const first = await SseClient.open(f.streamUrl(), auth());
  await first.waitFor((e) => e.type === 'stream.live');
  const runId = await sendMessage(f, 'long answer please');
  await until(() => deltasOf(first, runId) >= 10);
  first.close();
  const last = ids(first.events).at(-1)!;
  assert.ok(deltasOf(first, runId) < 60, 'left mid-run');
  const second = await SseClient.open(f.streamUrl(), { ...auth(), 'last-event-id': last });
  await second.waitFor(completedRun(runId));
  await witness.waitFor(completedRun(runId));
  await assertSameAsWitness(first.events, second.events, witness.events, runId);
  await waitSealed(f, runId);
  witness.close();
  second.close();
});

test('WebSocket: reconnecting with ?after= mid-run loses and duplicates nothing', async () => {
  const witness = await WsClient.open(f.wsUrl(), { headers: auth(), protocols: ['svc.msgpack.v1'] });
  await witness.waitFor((e) => e.type === 'stream.live');
  const first = await WsClient.open(f.wsUrl(), { headers: auth() });
  await first.waitFor((e) => e.type === 'stream.live');
  const runId = await sendMessage(f, 'another long answer');
  await until(() => deltasOf(first, runId) >= 10);
  first.close();
  const last = ids(first.events).at(-1)!;
  const second = await WsClient.open(f.wsUrl(f.threadId, `after=${last}`), { headers: auth() });
  await second.waitFor(completedRun(runId));
  await witness.waitFor(completedRun(runId));
  await assertSameAsWitness(first.events, second.events, witness.events, runId);
  await waitSealed(f, runId);
  witness.close();
  second.close();
});

test('a UI that reads the items page mid-run and subscribes after its resume_after rebuilds the run', async () => {
  const runId = await sendMessage(f, 'page then stream');
  const page = await (async () => {
    for (;;) {
      const p = await f.client.get(`/api/v1/runs/${runId}/items`);
      const tail = (p.body.items as any[]).find((i) => i.state === 'in_progress' && (i.content?.text ?? '').length > 0);
      if (tail) return p.body;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const client = await WsClient.open(f.wsUrl(f.threadId, `after=${page.resume_after}`), { headers: auth() });
  await client.waitFor(completedRun(runId));
  // The page's text, continued by the deltas after resume_after (an item started later is whole).
  const texts = new Map<number, string>((page.items as any[]).map((i) => [i.ordinal, i.content?.text ?? '']));
  const startedLive = new Set(client.events.filter((e) => e.type === 'item.started' && e.data.run_id === runId).map((e) => e.data.ordinal as number));
  for (const [ordinal, text] of textsFromEvents(client.events, runId)) texts.set(ordinal, startedLive.has(ordinal) ? text : `${texts.get(ordinal) ?? ''}${text}`);
  const items = (await f.client.get(`/api/v1/runs/${runId}/items`)).body.items as any[];
  for (const item of items.filter((i) => typeof i.content?.text === 'string')) assert.is(texts.get(item.ordinal), item.content.text, `item ${item.ordinal}`);
  client.close();
});

test('a resume point before the retained window gets stream.reset (SSE ends, WebSocket closes 4000)', async () => {
  const thread = await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {});
  const threadId = thread.body.id as string;
  const bus = engineFor(f.service.services).bus;
  const event: StreamEvent = { type: 'tail.reset', run_id: 'run_x', ordinal: 1, attempt: 1 };
  const [firstId] = await bus.publish(threadId, [event]);
  for (let i = 0; i < STREAM_MAXLEN + 500; i += 500) await bus.publish(threadId, Array.from({ length: 500 }, () => event));
  const sse = await SseClient.open(f.streamUrl(threadId, `after=${firstId}`), auth());
  const reset = await sse.waitFor((e) => e.type === 'stream.reset');
  assert.is(reset.id, null);
  assert.is(reset.data.reason, 'trimmed');
  await sse.waitEnded();
  assert.is(sse.records().length, 0, 'no record after a gap');
  const ws = await WsClient.open(f.wsUrl(threadId, `after=${firstId}`), { headers: auth() });
  await ws.waitEnded();
  assert.is(ws.closeCode, 4000);
  assert.ok(ws.events.some((e) => e.type === 'stream.reset'));
  // From the newest id, the same thread streams normally.
  const newest = (await bus.lastId(threadId))!;
  const ok = await SseClient.open(f.streamUrl(threadId, `after=${newest}`), auth());
  await ok.waitFor((e) => e.type === 'stream.live');
  ok.close();
});

test.run();
