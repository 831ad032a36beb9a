import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineFor } from '../../../actors/index.js';
import { SseClient, WsClient } from './stream-clients.js';
import { sendMessage, startStreamFixture, waitSealed, type StreamFixture } from './stream-fixture.js';

// N subscribers of one thread cost one stream read: every one of them receives every record,
// and the process fans each record out once (uWS topic publish + one SSE write each).
const test = suite('api/streams/fanout');
let f: StreamFixture;

test.before(async () => {
  f = await startStreamFixture({ kvUrl: 'redis://127.0.0.1:6379', tokens: 30, tokenDelayMs: 2 });
});

test.after(async () => {
  await f?.stop();
});

async function metric(name: string): Promise<number> {
  const values = (await f.service.services.metrics.registry.getSingleMetric(name)!.get()).values;
  return values.reduce((sum, v) => sum + v.value, 0);
}

test('200 concurrent subscribers (SSE, WebSocket JSON and MessagePack) all receive every event', async () => {
  const auth = { authorization: `Bearer ${f.apiKey}` };
  const opening = [
    ...Array.from({ length: 100 }, () => SseClient.open(f.streamUrl(), auth)),
    ...Array.from({ length: 50 }, () => WsClient.open(f.wsUrl(), { headers: auth })),
    ...Array.from({ length: 50 }, () => WsClient.open(f.wsUrl(), { headers: auth, protocols: ['svc.msgpack.v1'] })),
  ];
  const clients = await Promise.all(opening);
  await Promise.all(clients.map((c) => c.waitFor((e) => e.type === 'stream.live')));
  const bus = engineFor(f.service.services).bus;
  const before = (await bus.lastId(f.threadId)) ?? '0-0';
  const fannedBefore = await metric('svc_stream_events_total');
  const runId = await sendMessage(f, 'to everyone');
  await waitSealed(f, runId);
  const done = (e: { type: string; data: any }) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed';
  await Promise.all(clients.map((c) => c.waitFor(done)));
  // Events may still follow the run's completion (thread.changed): settle on the stream's content.
  let stored: string[] = [];
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    stored = (await bus.read(f.threadId, before, 10_000)).records.map((r) => r.id);
    if (clients.every((c) => c.records().length === stored.length)) break;
  }
  assert.ok(stored.length >= 30, `${stored.length} records`);
  for (const [i, client] of clients.entries()) assert.equal(client.records().map((e) => e.id), stored, `subscriber ${i} saw every record once, in order`);
  // One fan-out per record however many subscribers.
  assert.is((await metric('svc_stream_events_total')) - fannedBefore, stored.length);
  assert.is(await metric('svc_stream_subscribers'), 200);
  for (const client of clients) client.close();
});

test('1,100 WebSocket subscribers (three shards of the fan-out) and late joiners resuming mid-run all receive every record once, in order', async () => {
  // More than one shard (api/streams/ws-fanout.ts: 512 subscribers each): records reach the
  // shards over several turns of the loop, and subscribers that resume while the run streams
  // join shards that may still be behind.
  const auth = { authorization: `Bearer ${f.apiKey}` };
  const clients: WsClient[] = [];
  for (let i = 0; i < 1_100; i += 100) {
    const protocols = (j: number) => [(i + j) % 2 ? 'svc.msgpack.v1' : 'svc.json.v1'];
    clients.push(...(await Promise.all(Array.from({ length: 100 }, (_, j) => WsClient.open(f.wsUrl(), { headers: auth, protocols: protocols(j) })))));
  }
  await Promise.all(clients.map((c) => c.waitFor((e) => e.type === 'stream.live')));
  const bus = engineFor(f.service.services).bus;
  const before = (await bus.lastId(f.threadId)) ?? '0-0';
  const runId = await sendMessage(f, 'to the crowd');
  const done = (e: { type: string; data: any }) => e.type === 'run.status' && e.data.run_id === runId && e.data.status === 'completed';
  // A joiner that resumes after the run's completion (a fast run can end within the joins) is
  // not sent it again: it is not waited for; the record comparison below still checks it.
  const late: Array<{ client: WsClient; after: string; afterDone: boolean }> = [];
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 3));
    const seen = clients[0]!.records();
    const after = seen.at(-1)?.id ?? before;
    late.push({ client: await WsClient.open(f.wsUrl(undefined, `after=${after}`), { headers: auth }), after, afterDone: seen.some(done) });
  }
  await waitSealed(f, runId);
  const everyone = [...clients, ...late.map((l) => l.client)];
  await Promise.all([...clients, ...late.filter((l) => !l.afterDone).map((l) => l.client)].map((c) => c.waitFor(done)));
  let stored: string[] = [];
  const expected = (after: string) => (after === before ? stored : stored.slice(stored.indexOf(after) + 1));
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    stored = (await bus.read(f.threadId, before, 10_000)).records.map((r) => r.id);
    if (clients.every((c) => c.records().length === stored.length) && late.every((l) => l.client.records().length === expected(l.after).length)) break;
  }
  assert.ok(stored.length >= 30, `${stored.length} records`);
  for (const [i, client] of clients.entries()) assert.equal(client.records().map((e) => e.id), stored, `subscriber ${i} saw every record once, in order`);
  assert.ok(late.some((l) => l.after !== before), 'some joiners resumed mid-run');
  for (const [i, { client, after }] of late.entries()) assert.equal(client.records().map((e) => e.id), expected(after), `late joiner ${i} (after ${after})`);
  assert.is(await metric('svc_stream_subscribers'), 1_110);
  for (const client of everyone) client.close();
});

test.run();
