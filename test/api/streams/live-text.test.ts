import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SseClient, WsClient, type SeenEvent } from './stream-clients.js';
import { sendMessage, startStreamFixture, textsFromEvents, waitSealed, type StreamFixture } from './stream-fixture.js';

// A UI renders a run from the stream alone: the text it rebuilds from item.started + item.delta
// events, and the items of item.completed events, equal what GET /runs/{id}/items commits.
const test = suite('api/streams/live-text');
let f: StreamFixture;

test.before(async () => {
  f = await startStreamFixture({ tokens: 12, tokenDelayMs: 2 });
});

test.after(async () => {
  await f?.stop();
});

async function committedItems(runId: string): Promise<any[]> {
  const page = await f.client.get(`/api/v1/runs/${runId}/items`);
  assert.is(page.status, 200);
  return page.body.items;
}

async function assertRendersRun(events: SeenEvent[], runId: string): Promise<void> {
  const items = await committedItems(runId);
  const texts = textsFromEvents(events, runId);
  const completed = events.filter((e) => e.type === 'item.completed' && e.data.run_id === runId);
  const textItems = items.filter((i) => typeof i.content?.text === 'string');
  assert.ok(textItems.length > 0, 'the run committed text items');
  for (const item of textItems) assert.is(texts.get(item.ordinal), item.content.text, `text of item ${item.ordinal} rebuilt from deltas`);
  const deltas = events.filter((e) => e.type === 'item.delta' && e.data.run_id === runId);
  // 12 tokens, 2 ms apart: under load the attempt and the host coalesce deltas that arrive in
  // one tick (a turn's first delta is always sent alone), so the count is between 2 and 12.
  assert.ok(deltas.length >= 2 && deltas.length <= 12, `the text arrived delta by delta (${deltas.length} deltas)`);
  assert.equal(completed.map((e) => e.data.ordinal), items.map((i) => i.ordinal), 'one item.completed per committed item');
  for (const item of items) {
    const seen = completed.find((e) => e.data.ordinal === item.ordinal)!.data.item;
    assert.equal({ id: seen.id, kind: seen.kind, content: seen.content }, { id: item.id, kind: item.kind, content: item.content });
  }
  const statuses = events.filter((e) => e.type === 'run.status' && e.data.run_id === runId).map((e) => e.data.status);
  assert.is(statuses[statuses.length - 1], 'completed');
  // Stream ids strictly increase: nothing repeated or reordered.
  const ids = events.filter((e) => e.id !== null).map((e) => e.id!);
  for (let i = 1; i < ids.length; i++) assert.ok(compareIds(ids[i - 1]!, ids[i]!) < 0, `ids increase at ${i}`);
}

function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am !== bm ? (am < bm ? -1 : 1) : as === bs ? 0 : as < bs ? -1 : 1;
}

test('SSE: a run arrives delta by delta and the rebuilt items equal the committed ones', async () => {
  const sse = await SseClient.open(f.streamUrl(), { authorization: `Bearer ${f.apiKey}` });
  assert.is(sse.status, 200);
  assert.match(String(sse.headers['content-type']), /^text\/event-stream/);
  assert.ok(sse.headers['x-request-id']);
  await sse.waitFor((e) => e.type === 'stream.live');
  assert.is(sse.retry, 2000);
  const runId = await sendMessage(f, 'hello');
  await waitSealed(f, runId);
  await sse.waitFor((e) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed');
  await assertRendersRun(sse.events, runId);
  assert.match(sse.body, /\nid: \d+-\d+\nevent: item\.delta\ndata: \{/);
  sse.close();
});

test('WebSocket (JSON and MessagePack): the same events, frames {id, event}', async () => {
  const auth = { authorization: `Bearer ${f.apiKey}` };
  const json = await WsClient.open(f.wsUrl(), { headers: auth });
  const packed = await WsClient.open(f.wsUrl(), { headers: auth, protocols: ['svc.msgpack.v1'] });
  assert.is(json.protocol, '');
  assert.is(packed.protocol, 'svc.msgpack.v1');
  await json.waitFor((e) => e.type === 'stream.live');
  await packed.waitFor((e) => e.type === 'stream.live');
  const runId = await sendMessage(f, 'hello again');
  await waitSealed(f, runId);
  for (const client of [json, packed]) {
    await client.waitFor((e) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed');
    await assertRendersRun(client.events, runId);
  }
  assert.equal(packed.records().map((e) => e.id), json.records().map((e) => e.id), 'both formats carry the same records');
  assert.ok(packed.binaryFrames > 0 && json.binaryFrames === 0);
  json.close();
  packed.close();
});

test('resuming after the resume_after of GET items continues exactly where the page ends', async () => {
  const runId = await sendMessage(f, 'and once more');
  await waitSealed(f, runId);
  const page = await f.client.get(`/api/v1/runs/${runId}/items`);
  const resumeAfter = page.body.resume_after as string;
  assert.match(resumeAfter, /^\d+-\d+$/);
  const sse = await SseClient.open(f.streamUrl(f.threadId, `after=${resumeAfter}`), { authorization: `Bearer ${f.apiKey}` });
  const live = await sse.waitFor((e) => e.type === 'stream.live');
  // The run's events up to resume_after are covered by the page: none of them is replayed.
  assert.ok(sse.records().every((e) => compareIds(e.id!, resumeAfter) > 0));
  assert.ok(compareIds(live.data.after, resumeAfter) >= 0);
  const next = await sendMessage(f, 'after the page');
  await waitSealed(f, next);
  await sse.waitFor((e) => e.type === 'run.status' && e.data.run_id === next && e.data.status === 'completed');
  await assertRendersRun(sse.events, next);
  sse.close();
});

test.run();
