import type { FileHandle } from 'node:fs/promises';
import { OBJECT_STORE_ERROR, ObjectStoreError } from './object-store-error.js';

// The on-disk form of one object in the directory store:
//   "SVCOBJ" | version byte 1 | uint32 BE header length N | N bytes of JSON {contentType?} | body
//
// Why a header rather than a sidecar file: one rename then commits body and content type
// together. With a sidecar, two concurrent puts of one key, or a crash between two renames,
// can pair one put's body with another put's content type.

const MAGIC = Buffer.from('SVCOBJ', 'latin1');
const VERSION = 1;
export const PREAMBLE_BYTES = MAGIC.length + 1 + 4;
// Content types are short; a larger header means the file is not ours or is damaged.
const MAX_HEADER_BYTES = 64 * 1024;

export interface ObjectFileHeader {
  contentType?: string;
}

export function encodeObjectHeader(header: ObjectFileHeader): Buffer {
  const json = Buffer.from(JSON.stringify(header.contentType === undefined ? {} : { contentType: header.contentType }));
  const preamble = Buffer.alloc(PREAMBLE_BYTES);
  MAGIC.copy(preamble, 0);
  preamble.writeUInt8(VERSION, MAGIC.length);
  preamble.writeUInt32BE(json.length, MAGIC.length + 1);
  return Buffer.concat([preamble, json]);
}

function corrupt(why: string): ObjectStoreError {
  return new ObjectStoreError(OBJECT_STORE_ERROR.CORRUPT, `stored object is unreadable: ${why}`);
}

/** The header length announced by a preamble. */
export function readPreamble(preamble: Uint8Array): number {
  const buf = Buffer.from(preamble.buffer, preamble.byteOffset, preamble.byteLength);
  if (buf.length < PREAMBLE_BYTES || !buf.subarray(0, MAGIC.length).equals(MAGIC)) throw corrupt('bad magic');
  if (buf.readUInt8(MAGIC.length) !== VERSION) throw corrupt('unknown version');
  const length = buf.readUInt32BE(MAGIC.length + 1);
  if (length > MAX_HEADER_BYTES) throw corrupt('header too large');
  return length;
}

export function parseObjectHeader(json: Uint8Array): ObjectFileHeader {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(json).toString('utf8'));
  } catch {
    throw corrupt('header is not JSON');
  }
  if (typeof value !== 'object' || value === null) throw corrupt('header is not an object');
  const contentType = (value as { contentType?: unknown }).contentType;
  if (contentType !== undefined && typeof contentType !== 'string') throw corrupt('bad content type');
  return contentType === undefined ? {} : { contentType };
}

/** Splits a whole object file into header and body; the body is a view, not a copy. */
export function decodeObjectFile(file: Buffer): { header: ObjectFileHeader; body: Uint8Array } {
  const headerLength = readPreamble(file);
  const bodyStart = PREAMBLE_BYTES + headerLength;
  if (file.length < bodyStart) throw corrupt('truncated header');
  const header = parseObjectHeader(file.subarray(PREAMBLE_BYTES, bodyStart));
  // A plain Uint8Array, so both drivers hand back the same type.
  const body = new Uint8Array(file.buffer, file.byteOffset + bodyStart, file.length - bodyStart);
  return { header, body };
}

/** Reads only the header of an open object file, plus the body size from its length. */
export async function readObjectHead(handle: FileHandle): Promise<{ header: ObjectFileHeader; size: number }> {
  const preamble = Buffer.alloc(PREAMBLE_BYTES);
  const { bytesRead } = await handle.read(preamble, 0, PREAMBLE_BYTES, 0);
  if (bytesRead < PREAMBLE_BYTES) throw corrupt('truncated preamble');
  const headerLength = readPreamble(preamble);
  const json = Buffer.alloc(headerLength);
  const got = await handle.read(json, 0, headerLength, PREAMBLE_BYTES);
  if (got.bytesRead < headerLength) throw corrupt('truncated header');
  const { size: fileSize } = await handle.stat();
  return { header: parseObjectHeader(json), size: fileSize - PREAMBLE_BYTES - headerLength };
}
