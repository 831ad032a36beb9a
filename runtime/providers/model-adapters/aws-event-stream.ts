// AWS event-stream binary framing (application/vnd.amazon.eventstream), as used by Bedrock
// ConverseStream. Each message, all integers big-endian:
//   total length u32 | headers length u32 | prelude CRC32 u32 (of the 8 bytes before)
//   headers | payload | message CRC32 u32 (of every byte before it)
// A header is: name length u8, name, value type u8, value (type-specific; strings and byte
// arrays are a u16 length then bytes). CRC32 is the gzip/IEEE one (node:zlib crc32).
import { crc32 } from 'node:zlib';
import { ModelProtocolError } from './protocol-error.js';

export type HeaderValue = boolean | number | bigint | string | Uint8Array | Date;

export interface EventStreamMessage {
  headers: Record<string, HeaderValue>;
  payload: Uint8Array;
}

const PRELUDE_BYTES = 12;
const MIN_MESSAGE_BYTES = 16;
// The format's own limit (16 MiB); a larger length means the framing is lost.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Splits a byte stream into verified messages; chunk boundaries may fall anywhere. */
export async function* decodeEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventStreamMessage> {
  let buffer = Buffer.alloc(0);
  for await (const chunk of body) {
    buffer = buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffer, chunk]);
    while (buffer.length >= PRELUDE_BYTES) {
      const total = buffer.readUInt32BE(0);
      if (crc32(buffer.subarray(0, 8)) !== buffer.readUInt32BE(8)) throw new ModelProtocolError('event-stream prelude CRC mismatch');
      if (total < MIN_MESSAGE_BYTES || total > MAX_MESSAGE_BYTES) throw new ModelProtocolError(`event-stream message length ${total} is invalid`);
      if (buffer.length < total) break;
      yield parseMessage(buffer.subarray(0, total));
      buffer = buffer.subarray(total);
    }
  }
  if (buffer.length > 0) throw new ModelProtocolError('event-stream ended inside a message');
}

function parseMessage(frame: Buffer): EventStreamMessage {
  const total = frame.length;
  const headersLength = frame.readUInt32BE(4);
  if (crc32(frame.subarray(0, total - 4)) !== frame.readUInt32BE(total - 4)) throw new ModelProtocolError('event-stream message CRC mismatch');
  if (PRELUDE_BYTES + headersLength > total - 4) throw new ModelProtocolError('event-stream headers overrun the message');
  const headers = parseHeaders(frame.subarray(PRELUDE_BYTES, PRELUDE_BYTES + headersLength));
  return { headers, payload: new Uint8Array(frame.subarray(PRELUDE_BYTES + headersLength, total - 4)) };
}

function parseHeaders(bytes: Buffer): Record<string, HeaderValue> {
  const headers: Record<string, HeaderValue> = {};
  let at = 0;
  const need = (n: number): void => {
    if (at + n > bytes.length) throw new ModelProtocolError('event-stream header is truncated');
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = bytes.readUInt8(at);
    need(1 + nameLength + 1);
    const name = bytes.toString('utf8', at + 1, at + 1 + nameLength);
    const type = bytes.readUInt8(at + 1 + nameLength);
    at += 2 + nameLength;
    let value: HeaderValue;
    switch (type) {
      case 0:
      case 1:
        value = type === 0;
        break;
      case 2:
        need(1);
        value = bytes.readInt8(at);
        at += 1;
        break;
      case 3:
        need(2);
        value = bytes.readInt16BE(at);
        at += 2;
        break;
      case 4:
        need(4);
        value = bytes.readInt32BE(at);
        at += 4;
        break;
      case 5:
      case 8: {
        need(8);
        const n = bytes.readBigInt64BE(at);
        value = type === 8 ? new Date(Number(n)) : n;
        at += 8;
        break;
      }
      case 6:
      case 7: {
        need(2);
        const length = bytes.readUInt16BE(at);
        need(2 + length);
        const raw = bytes.subarray(at + 2, at + 2 + length);
        value = type === 7 ? raw.toString('utf8') : new Uint8Array(raw);
        at += 2 + length;
        break;
      }
      case 9:
        need(16);
        value = bytes.toString('hex', at, at + 16);
        at += 16;
        break;
      default:
        throw new ModelProtocolError(`event-stream header type ${type} is unknown`);
    }
    headers[name] = value;
  }
  return headers;
}

/** Encodes one message with string headers (what AWS services emit; used by test servers). */
export function encodeEventStreamMessage(headers: Record<string, string>, payload: Uint8Array | string): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name, 'utf8');
      const v = Buffer.from(value, 'utf8');
      const head = Buffer.alloc(1 + n.length + 3);
      head.writeUInt8(n.length, 0);
      n.copy(head, 1);
      head.writeUInt8(7, 1 + n.length);
      head.writeUInt16BE(v.length, 2 + n.length);
      return Buffer.concat([head, v]);
    }),
  );
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  const total = PRELUDE_BYTES + headerBytes.length + body.length + 4;
  const prelude = Buffer.alloc(PRELUDE_BYTES);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const withoutCrc = Buffer.concat([prelude, headerBytes, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(withoutCrc), 0);
  return Buffer.concat([withoutCrc, crc]);
}
