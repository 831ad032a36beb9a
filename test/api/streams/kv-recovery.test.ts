import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server.js';
import { SseClient, type SeenEvent } from './stream-clients.js';
import { sendMessage, startStreamFixture, waitSealed, type StreamFixture } from './stream-fixture.js';

// Issue 19, item 12: a client that follows the README's recovery after `stream.error kv_lost`
// gets every item of a run started during the outage exactly once. The run is started while
// Redis is down (its user_message, tool call and tool result commit then, without stream ids),
// and Redis — a fresh server, its data gone — returns while the final answer is streaming.
const test = suite('api/streams/kv-recovery');
let redis: PrivateRedis;
let f: StreamFixture;
const auth = () => ({ authorization: `Bearer ${f.apiKey}` });

test.before(async () => {
  redis = await startPrivateRedis();
  f = await startStreamFixture({
    kvUrl: redis.url,
    tokenDelayMs: 150,
    tokens: 30,
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } } },
    script: [
      { type: 'tool_calls', calls: [{ id: 'call_1', name: 'echo', arguments: '{"text":"during the outage"}', pieces: 2 }] },
      { type: 'text', text: Array.from({ length: 40 }, (_, i) => `w${i} `) },
    ],
  });
});

test.after(async () => {
  await f?.stop();
  await redis?.stop();
});

interface Held {
  kind: string;
  content: Record<string, unknown>;
  /** On the items page as committed (ordinal below the page's position): it never changes. */
  committed: boolean;
}

/** The README's recovery: re-read the items page, subscribe after its resume_after; on 503, again. */
async function recover(runId: string, deadline: number): Promise<{ page: any; sse: SseClient }> {
  for (;;) {
    const page = (await f.client.get(`/api/v1/runs/${runId}/items`)).body;
    const sse = await SseClient.open(f.streamUrl(f.threadId, `after=${encodeURIComponent(page.resume_after)}`), auth());
    if (sse.status === 200) {
      await sse.waitFor((e) => e.type === 'stream.live' || e.type === 'stream.error');
      if (!sse.events.some((e) => e.type === 'stream.error')) return { page, sse };
    }
    sse.close();
    assert.ok([200, 503].includes(sse.status), `stream answered ${sse.status}`);
    if (Date.now() > deadline) throw new Error('the stream never came back');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** merge, printing what the client merged when it fails (for the next look at a rare failure). */
function merge(page: any, events: SeenEvent[], runId: string): Map<number, Held> {
  try {
    return mergeEvents(page, events, runId);
  } catch (error) {
    // Seen about once in 75 runs under load (sessions 4 and 6): "a delta for ordinal N, which the client never saw start".
    console.log('kv-recovery failure: the page', JSON.stringify({ position: page.position, resume_after: page.resume_after, items: page.items.map((i: any) => [i.ordinal, i.kind, i.state, i.first_stream_id, i.last_stream_id]) }));
    console.log('kv-recovery failure: the stream (id, type, ordinal, this run, attempt)', JSON.stringify(events.map((e) => [e.id, e.type, e.data.ordinal, e.data.run_id === runId, e.data.attempt ?? null])));
    throw error;
  }
}

/** Applies the page, then the stream's events for the run, as the README tells a client to. */
function mergeEvents(page: any, events: SeenEvent[], runId: string): Map<number, Held> {
  const held = new Map<number, Held>();
  const position = Number(page.position);
  for (const item of page.items) held.set(item.ordinal, { kind: item.kind, content: item.content, committed: item.ordinal < position });
  for (const { type, data } of events) {
    if (data.run_id !== runId) continue;
    const current = held.get(data.ordinal);
    if (type === 'tail.reset') {
      for (const [ordinal, item] of held) if (ordinal >= data.ordinal && !item.committed) held.delete(ordinal);
    } else if (current?.committed) {
      continue; // a committed item never changes: events about it add nothing
    } else if (type === 'item.started' || type === 'item.completed') {
      held.set(data.ordinal, { kind: data.item.kind, content: { ...data.item.content }, committed: false });
    } else if (type === 'item.delta' && current) {
      for (const field of ['text', 'arguments'] as const) {
        if (typeof data.delta[field] === 'string') current.content[field] = `${(current.content[field] as string | undefined) ?? ''}${data.delta[field]}`;
      }
    } else if (type === 'item.delta') {
      throw new Error(`a delta for ordinal ${data.ordinal}, which the client never saw start`);
    }
  }
  return held;
}

test('a run started while Redis is lost: the documented recovery yields every item exactly once', async () => {
  const first = await SseClient.open(f.streamUrl(), auth());
  await first.waitFor((e) => e.type === 'stream.live');
  await redis.stop();
  const lost = await first.waitFor((e) => e.type === 'stream.error');
  assert.is(lost.data.reason, 'kv_lost');
  const runId = await sendMessage(f, 'started during the outage');
  // The first step (user_message, tool call) and the tool result commit without Redis; the final
  // answer (40 chunks, 150 ms apart) is streaming when Redis returns.
  const recovered = recover(runId, Date.now() + 60_000);
  const deadline = Date.now() + 30_000;
  while ((await query<{ n: number }>(f.db.url, 'select next_ordinal as n from runs where id = $1', [runId]))[0]!.n < 4 || f.model.requests.length < 2) {
    if (Date.now() > deadline) throw new Error('the run did not reach its final answer');
    await new Promise((r) => setTimeout(r, 25));
  }
  const lostItems = await query<{ ordinal: number; first_stream_id: string | null }>(f.db.url, 'select ordinal, first_stream_id from run_items where run_id = $1 order by ordinal', [runId]);
  assert.equal(lostItems.map((i) => i.first_stream_id), [null, null, null], 'items 1-3 committed while Redis was lost');
  await redis.start();
  const { page, sse } = await recovered;
  assert.is(page.run.status, 'running', 'the client recovered while the run was still running');
  const sealed = await waitSealed(f, runId);
  assert.is(sealed.status, 'completed');
  await sse.waitFor((e) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed', 30_000);
  const final = (await f.client.get(`/api/v1/runs/${runId}/items?after=0&limit=500`)).body.items as any[];
  assert.equal(final.map((i) => i.ordinal), [1, 2, 3, 4]);
  const held = merge(page, sse.records(), runId);
  assert.equal([...held.keys()].sort((a, b) => a - b), final.map((i) => i.ordinal), 'every item, once');
  for (const item of final) {
    assert.is(held.get(item.ordinal)!.kind, item.kind, `kind of ${item.ordinal}`);
    assert.equal(held.get(item.ordinal)!.content, item.content, `content of ${item.ordinal}`);
  }
  const ids = sse.records().map((e) => e.id);
  assert.is(new Set(ids).size, ids.length, 'no stream record twice');
  first.close();
  sse.close();
});

test('every item page of a running run is consistent with its resume point while the stream runs', async () => {
  // Pages read at random moments of a streaming run, each merged with the stream after its
  // resume_after, all end with the committed items (no missed or doubled delta).
  const runId = await sendMessage(f, 'pages under way');
  const clients: Array<{ page: any; sse: SseClient }> = [];
  for (let i = 0; i < 6; i++) {
    const page = (await f.client.get(`/api/v1/runs/${runId}/items`)).body;
    const sse = await SseClient.open(f.streamUrl(f.threadId, `after=${encodeURIComponent(page.resume_after)}`), auth());
    assert.is(sse.status, 200);
    clients.push({ page, sse });
    await new Promise((r) => setTimeout(r, 200 + i * 150));
  }
  await waitSealed(f, runId);
  const final = (await f.client.get(`/api/v1/runs/${runId}/items?after=0&limit=500`)).body.items as any[];
  for (const { page, sse } of clients) {
    await sse.waitFor((e) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed', 30_000);
    const held = merge(page, sse.records(), runId);
    assert.equal([...held.keys()].sort((a, b) => a - b), final.map((i) => i.ordinal));
    for (const item of final) assert.equal(held.get(item.ordinal)!.content, item.content, `content of ${item.ordinal}`);
    sse.close();
  }
});

test.run();
