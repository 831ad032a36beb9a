import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { crc32 } from 'node:zlib';
import { decodeEventStream, encodeEventStreamMessage } from '../../../../runtime/providers/model-adapters/aws-event-stream.js';
import { ModelProtocolError } from '../../../../runtime/providers/model-adapters/protocol-error.js';
import { collect } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/aws-event-stream');

async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

// Published example encodings (prelude, CRCs) of the payload {"foo": "bar"}.
test('encodes the published example frames byte for byte', () => {
  const bare = encodeEventStreamMessage({}, '{"foo": "bar"}');
  assert.equal([...bare.subarray(0, 12)], [0, 0, 0, 30, 0, 0, 0, 0, 186, 242, 246, 138]);
  assert.equal([...bare.subarray(-4)], [174, 114, 88, 228]);
  const withHeader = encodeEventStreamMessage({ 'content-type': 'application/json' }, '{"foo": "bar"}');
  assert.equal([...withHeader.subarray(0, 12)], [0, 0, 0, 62, 0, 0, 0, 32, 64, 93, 249, 70]);
  assert.equal([...withHeader.subarray(-4)], [111, 162, 191, 59]);
});

test('decodes frames split at every byte boundary, with string headers and payload', async () => {
  const a = encodeEventStreamMessage({ ':event-type': 'contentBlockDelta', ':message-type': 'event' }, '{"delta":{"text":"hé"}}');
  const b = encodeEventStreamMessage({ ':event-type': 'messageStop' }, '{"stopReason":"end_turn"}');
  const bytes = Buffer.concat([a, b]);
  for (const size of [1, 3, 7, bytes.length]) {
    const messages = await collect(decodeEventStream(pieces(bytes, size)));
    assert.is(messages.length, 2);
    assert.equal(messages[0]?.headers, { ':event-type': 'contentBlockDelta', ':message-type': 'event' });
    assert.is(new TextDecoder().decode(messages[0]?.payload), '{"delta":{"text":"hé"}}');
    assert.is(messages[1]?.headers[':event-type'], 'messageStop');
  }
});

test('decodes the non-string header types (bool, byte, short, int, long, bytes, timestamp, uuid)', async () => {
  const h = Buffer.concat([
    header('t', 0, Buffer.alloc(0)),
    header('f', 1, Buffer.alloc(0)),
    header('b', 2, Buffer.from([0xff])),
    header('s', 3, Buffer.from([0x01, 0x02])),
    header('i', 4, Buffer.from([0, 0, 1, 0])),
    header('l', 5, Buffer.from([0, 0, 0, 0, 0, 0, 0, 9])),
    header('y', 6, Buffer.from([0, 2, 0xaa, 0xbb])),
    header('d', 8, Buffer.from([0, 0, 0, 0, 0, 0, 0x03, 0xe8])),
    header('u', 9, Buffer.alloc(16, 0x11)),
  ]);
  const [message] = await collect(decodeEventStream(pieces(frame(h, Buffer.from('{}')), 5)));
  const headers = message?.headers ?? {};
  assert.is(headers.t, true);
  assert.is(headers.f, false);
  assert.is(headers.b, -1);
  assert.is(headers.s, 258);
  assert.is(headers.i, 256);
  assert.is(headers.l, 9n);
  assert.equal([...(headers.y as Uint8Array)], [0xaa, 0xbb]);
  assert.is((headers.d as Date).getTime(), 1000);
  assert.is(headers.u, '11'.repeat(16));
});

test('rejects a corrupted prelude CRC and a corrupted message CRC', async () => {
  const good = encodeEventStreamMessage({ ':event-type': 'x' }, '{}');
  const badPrelude = Buffer.from(good);
  badPrelude.writeUInt8(badPrelude.readUInt8(9) ^ 1, 9);
  const badMessage = Buffer.from(good);
  badMessage.writeUInt8(badMessage.readUInt8(good.length - 6) ^ 1, good.length - 6);
  for (const [bytes, what] of [[badPrelude, 'prelude'], [badMessage, 'message']] as const) {
    try {
      await collect(decodeEventStream(pieces(bytes, 4)));
      assert.unreachable('should have thrown');
    } catch (err) {
      assert.instance(err, ModelProtocolError);
      assert.match((err as Error).message, what);
    }
  }
});

test('rejects a stream that ends inside a message', async () => {
  const good = encodeEventStreamMessage({ ':event-type': 'x' }, '{}');
  try {
    await collect(decodeEventStream(pieces(good.subarray(0, good.length - 3), 100)));
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, ModelProtocolError);
  }
});

function header(name: string, type: number, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([name.length]), Buffer.from(name), Buffer.from([type]), value]);
}

function frame(headers: Buffer, payload: Buffer): Buffer {
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(12 + headers.length + payload.length + 4, 0);
  prelude.writeUInt32BE(headers.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, headers, payload]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([body, crc]);
}

test.run();
