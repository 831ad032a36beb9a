import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { streamModel, type ModelEvent, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { collect, readFixture } from './fixtures/wire-server.js';

// The node:http transport of model calls (http-transport.ts), against a local server that
// records which connection each request came on.
const test = suite('runtime/providers/model-adapters/http-transport');
const request: ModelRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

interface Seen {
  socket: number;
  closed: Promise<'completed' | 'aborted'>;
}

async function server(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const sockets = new WeakMap<object, number>();
  const srv = createServer((req, res) => {
    if (!sockets.has(req.socket)) sockets.set(req.socket, seen.length + 1);
    const closed = new Promise<'completed' | 'aborted'>((resolve) => res.on('close', () => resolve(res.writableFinished ? 'completed' : 'aborted')));
    seen.push({ socket: sockets.get(req.socket)!, closed });
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}

const text = (events: ModelEvent[]): string => events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');

test('a response whose end comes after the finish event is drained, and its connection serves the next call', async () => {
  // The whole answer, then a pause before the end of the response: the decoder has its
  // `finish` and stops reading before the body ends.
  const srv = await server((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(readFixture('openai-chat-text.sse'));
    setTimeout(() => res.end(), 50);
  });
  try {
    const first = await collect(streamModel('openai-chat', { base_url: srv.url }, request));
    assert.is(first.at(-1)?.type, 'finish');
    assert.is(await srv.seen[0]?.closed, 'completed', 'the first response was read to its end, not cut');
    // The client puts the socket back in its pool when it reads the end, a moment after the
    // server wrote it; nothing on the server side can observe that moment.
    await new Promise((r) => setTimeout(r, 100));
    const second = await collect(streamModel('openai-chat', { base_url: srv.url }, request));
    assert.is(second.at(-1)?.type, 'finish');
    assert.is(srv.seen.length, 2);
    assert.is(srv.seen[1]?.socket, srv.seen[0]?.socket, 'the second call reused the first connection');
  } finally {
    await srv.close();
  }
});

test('a consumer that stops early on a response already complete ends the call without an unhandled error', async () => {
  // The whole response arrives in one write: it is complete when the consumer stops at the
  // first delta, and the abort that follows must leave its connection alone.
  const srv = await server((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(readFixture('openai-chat-text.sse'));
  });
  try {
    for (let i = 0; i < 3; i++) {
      for await (const e of streamModel('openai-chat', { base_url: srv.url }, request)) if (e.type === 'text_delta') break;
    }
    const events = await collect(streamModel('openai-chat', { base_url: srv.url }, request));
    assert.is(events.at(-1)?.type, 'finish', 'later calls still work');
  } finally {
    await srv.close();
  }
});

test('a gzip-compressed body is decompressed', async () => {
  const body = gzipSync(readFixture('openai-chat-text.sse'));
  const srv = await server((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
    res.end(body);
  });
  try {
    const events = await collect(streamModel('openai-chat', { base_url: srv.url }, request));
    assert.is(events.at(-1)?.type, 'finish');
    assert.is(text(events), 'Hello! How can I help — ünïcode?');
  } finally {
    await srv.close();
  }
});

test('a failed status keeps its retry hint from the response headers', async () => {
  const srv = await server((_req, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '1234' });
    res.end(JSON.stringify({ error: { message: 'slow down' } }));
  });
  try {
    const events = await collect(streamModel('openai-chat', { base_url: srv.url }, request, { max_retries: 0 }));
    const last = events.at(-1);
    assert.ok(last?.type === 'error' && last.code === 'rate_limited', JSON.stringify(last));
    assert.is(last.type === 'error' ? last.retry_after_ms : undefined, 1234);
  } finally {
    await srv.close();
  }
});

test.run();
