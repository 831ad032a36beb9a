import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SseClient, WsClient, type SeenEvent } from './stream-clients.js';
import { sendMessage, startStreamFixture, waitSealed, type StreamFixture } from './stream-fixture.js';

// thread.changed carries the thread without message_history (which grows with every sealed run)
// and with message_count, its length; the history stays in GET /threads/{id} and in the
// responses that carry a thread.
const test = suite('api/streams/thread-changed');
let f: StreamFixture;

test.before(async () => {
  f = await startStreamFixture({ tokens: 3 });
});

test.after(async () => {
  await f?.stop();
});

const threadChanged = (events: SeenEvent[]) => events.filter((e) => e.type === 'thread.changed').map((e) => e.data.thread as Record<string, unknown>);

async function settle(client: SseClient | WsClient, count: number): Promise<Array<Record<string, unknown>>> {
  await client.waitFor(() => threadChanged(client.events).length >= count);
  return threadChanged(client.events);
}

test('a thread.changed event carries message_count and no message_history, on SSE and WebSocket', async () => {
  const sse = await SseClient.open(f.streamUrl(), { authorization: `Bearer ${f.apiKey}` });
  const ws = await WsClient.open(f.wsUrl(), { headers: { authorization: `Bearer ${f.apiKey}` } });
  await sse.waitFor((e) => e.type === 'stream.live');
  await ws.waitFor((e) => e.type === 'stream.live');

  const response = await f.client.post(
    `/api/v1/threads/${f.threadId}/inbox`,
    { agent_id: f.agentId, payload: { content: [{ type: 'text', text: 'first' }] } },
    { 'idempotency-key': `thread-changed-${Date.now()}` },
  );
  assert.is(response.status, 201, JSON.stringify(response.body));
  // The POST's response keeps the spec's thread, history included.
  assert.ok(Array.isArray(response.body.thread.message_history), 'the 201 body carries the history');
  assert.not.ok('message_count' in response.body.thread, 'the spec thread has no message_count');
  const firstRun = response.body.run.id as string;
  await waitSealed(f, firstRun);
  const secondRun = await sendMessage(f, 'second');
  await waitSealed(f, secondRun);

  const thread = (await f.client.get(`/api/v1/threads/${f.threadId}`)).body;
  const history = thread.message_history as unknown[];
  assert.ok(history.length >= 4, `two runs left their messages (${history.length})`);
  const expectedKeys = [...Object.keys(thread).filter((k) => k !== 'message_history'), 'message_count'].sort();

  for (const client of [sse, ws]) {
    // Per run: the POST that started it, and its seal.
    const events = await settle(client, 4);
    for (const event of events) {
      assert.not.ok('message_history' in event, 'no history in the event');
      assert.is(typeof event.message_count, 'number');
      assert.equal(Object.keys(event).sort(), expectedKeys, 'the thread view otherwise');
    }
    const [started, sealed, startedAgain, sealedAgain] = events as [Record<string, any>, Record<string, any>, Record<string, any>, Record<string, any>];
    assert.is(started.current_run_id, firstRun);
    assert.is(started.message_count, 0, 'nothing sealed yet');
    assert.is(sealed.current_run_id, null);
    assert.ok(sealed.message_count > 0, 'the seal appended the run\'s messages');
    assert.is(startedAgain.current_run_id, secondRun);
    assert.is(startedAgain.message_count, sealed.message_count);
    assert.is(sealedAgain.message_count, history.length, 'the count equals the history GET returns');
    assert.is(sealedAgain.version, thread.version);
  }
  sse.close();
  ws.close();
});

test.run();
