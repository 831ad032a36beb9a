import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineFor } from '../../../actors/index.js';
import type { StreamEvent } from '../../../runtime/index.js';
import { SseClient, WsClient } from './stream-clients.js';
import { startStreamFixture, type StreamFixture } from './stream-fixture.js';

// A subscriber that stops reading is bounded in buffered bytes and disconnected; the others
// keep receiving everything.
const test = suite('api/streams/backpressure');
let f: StreamFixture;
const sockets: Socket[] = [];
const total = 5000;
let before = '0-0';

test.before(async () => {
  f = await startStreamFixture({ kvUrl: 'redis://127.0.0.1:6379' });
});

test.after(async () => {
  for (const socket of sockets) socket.destroy();
  await f?.stop();
});

/** Sends a request by hand and never reads a byte of the answer. */
function nonReader(requestId: string, extraHeaders: string): Socket {
  const url = new URL(f.streamUrl());
  const socket = connect(Number(url.port), '127.0.0.1');
  socket.pause();
  socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${f.apiKey}\r\nX-Request-Id: ${requestId}\r\n${extraHeaders}\r\n`);
  sockets.push(socket);
  return socket;
}

const closedLog = (requestId: string) => f.service.logs.records.find((r) => r.msg === 'stream closed' && r.request_id === requestId);
const openedLog = (requestId: string) => f.service.logs.records.find((r) => r.msg === 'request' && r.request_id === requestId);

async function until(probe: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('clients that never read are cut off (SSE and WebSocket) while readers get every event', async () => {
  const auth = { authorization: `Bearer ${f.apiKey}` };
  const sse = await SseClient.open(f.streamUrl(), auth);
  const ws = await WsClient.open(f.wsUrl(), { headers: auth, protocols: ['svc.msgpack.v1'] });
  nonReader('bp-sse-non-reader', 'Accept: text/event-stream\r\n');
  nonReader('bp-ws-non-reader', 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n');
  await until(() => Boolean(openedLog('bp-sse-non-reader') && openedLog('bp-ws-non-reader')), 'both non-readers admitted');
  await Promise.all([sse.waitFor((e) => e.type === 'stream.live'), ws.waitFor((e) => e.type === 'stream.live')]);
  // ~40 MB of events, well past the kernel's socket buffers plus the 1 MiB per-client bound,
  // published as fast as the readers read (they share this process with the server).
  const bus = engineFor(f.service.services).bus;
  before = (await bus.lastId(f.threadId)) ?? '0-0';
  const event: StreamEvent = { type: 'item.delta', run_id: 'run_bulk', ordinal: 1, delta: { text: 'x'.repeat(8 * 1024) } };
  for (let sent = 0; sent < total; sent += 20) {
    await bus.publish(f.threadId, Array.from({ length: 20 }, () => event));
    await until(() => sse.records().length >= sent && ws.records().length >= sent, 'readers keep up');
  }
  await until(() => closedLog('bp-sse-non-reader') !== undefined, 'the SSE non-reader was disconnected');
  await until(() => closedLog('bp-ws-non-reader') !== undefined, 'the WebSocket non-reader was disconnected');
  assert.is(closedLog('bp-sse-non-reader')!.reason, 'backpressure');
  // uWS cuts a WebSocket past maxBackpressure without a close handshake.
  assert.is(closedLog('bp-ws-non-reader')!.reason, 'abnormal');
  await until(() => sse.records().length === total && ws.records().length === total, 'readers received every event');
  assert.not.ok(sse.ended || ws.ended, 'the readers stay connected');
  const max = (await f.service.services.metrics.registry.getSingleMetric('svc_stream_buffered_bytes_max')!.get()).values[0]?.value ?? 0;
  assert.ok(max <= 2 * 1024 * 1024, `no subscriber holds more than the bound (${max} bytes)`);
  sse.close();
  ws.close();
});

test('a client resuming from far back is paced by its reading, not cut off', async () => {
  const auth = { authorization: `Bearer ${f.apiKey}` };
  const sse = await SseClient.open(f.streamUrl(f.threadId, `after=${before}`), auth);
  const ws = await WsClient.open(f.wsUrl(f.threadId, `after=${before}`), { headers: auth });
  await Promise.all([sse.waitFor((e) => e.type === 'stream.live', 60_000), ws.waitFor((e) => e.type === 'stream.live', 60_000)]);
  assert.is(sse.records().length, total);
  assert.is(ws.records().length, total);
  sse.close();
  ws.close();
});

test.run();
