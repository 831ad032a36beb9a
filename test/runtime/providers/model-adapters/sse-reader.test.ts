import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readSse, type SseMessage } from '../../../../runtime/providers/model-adapters/sse-reader.js';
import { collect } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/sse-reader');

async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

const parse = (text: string, size = 1 << 20): Promise<SseMessage[]> => collect(readSse(pieces(new TextEncoder().encode(text), size)));

test('parses event, data and id fields and defaults the event name to "message"', async () => {
  assert.equal(await parse('event: ping\ndata: {"a":1}\nid: 7\n\ndata: x\n\n'), [
    { event: 'ping', data: '{"a":1}', id: '7' },
    { event: 'message', data: 'x', id: '7' },
  ]);
});

test('joins multi-line data with newlines and strips only one leading space', async () => {
  assert.equal(await parse('data:  a\ndata:b\ndata\n\n'), [{ event: 'message', data: ' a\nb\n' }]);
});

test('ignores comments and blocks without data, and discards an unterminated last block', async () => {
  assert.equal(await parse(': keep-alive\n\nevent: x\n\ndata: done\n\ndata: cut'), [{ event: 'message', data: 'done' }]);
});

test('accepts CRLF, CR and LF line endings', async () => {
  assert.equal(await parse('data: a\r\n\r\ndata: b\r\rdata: c\n\n'), [
    { event: 'message', data: 'a' },
    { event: 'message', data: 'b' },
    { event: 'message', data: 'c' },
  ]);
});

test('gives the same result at every chunk size, including splits inside CRLF and inside UTF-8 characters', async () => {
  const text = 'event: e\r\ndata: héllo — 🌍\r\n\r\ndata: {"x":"ü"}\n\n: c\n\ndata: last\r\n\r\n';
  const whole = await parse(text);
  assert.is(whole.length, 3);
  for (let size = 1; size <= 9; size++) assert.equal(await parse(text, size), whole, `chunk size ${size}`);
});

test.run();
