import { KEY_RING_ERROR, KeyRingError } from './key-ring-error.js';

// The stored form of one encrypted value, self-describing so a reader needs nothing else:
//   v1.<kid>.<wrap iv>.<wrapped data key + tag>.<iv>.<ciphertext + tag>
// all binary fields base64url without padding. `.` never occurs in a key id or in base64url.

export const TOKEN_VERSION = 'v1';
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const DATA_KEY_BYTES = 32;
const WRAPPED_KEY_BYTES = DATA_KEY_BYTES + TAG_BYTES;

export interface SecretToken {
  kid: string;
  wrapIv: Buffer;
  /** The data key encrypted under the ring key `kid`, GCM tag appended. */
  wrappedKey: Buffer;
  iv: Buffer;
  /** The value encrypted under the data key, GCM tag appended. */
  ciphertext: Buffer;
}

const KID = /^[A-Za-z0-9_-]{1,64}$/;
const B64URL = /^[A-Za-z0-9_-]*$/;

function malformed(why: string): KeyRingError {
  return new KeyRingError(KEY_RING_ERROR.MALFORMED_SECRET, `malformed secret: ${why}`);
}

function decodeField(field: string, name: string, minBytes: number, maxBytes = minBytes): Buffer {
  const bytes = Buffer.from(field, 'base64url');
  // Re-encoding must give the field back: rejects stray characters Buffer.from would skip.
  if (!B64URL.test(field) || bytes.toString('base64url') !== field) throw malformed(`${name} is not base64url`);
  if (bytes.length < minBytes || bytes.length > maxBytes) throw malformed(`${name} has the wrong length`);
  return bytes;
}

export function formatSecretToken(token: SecretToken): string {
  return [
    TOKEN_VERSION,
    token.kid,
    token.wrapIv.toString('base64url'),
    token.wrappedKey.toString('base64url'),
    token.iv.toString('base64url'),
    token.ciphertext.toString('base64url'),
  ].join('.');
}

export function parseSecretToken(value: string): SecretToken {
  if (typeof value !== 'string') throw malformed('not a string');
  const parts = value.split('.');
  if (parts[0] !== TOKEN_VERSION) throw malformed('unknown version');
  const [, kid, wrapIv, wrappedKey, iv, ciphertext] = parts;
  if (parts.length !== 6 || kid === undefined || wrapIv === undefined || wrappedKey === undefined || iv === undefined || ciphertext === undefined) {
    throw malformed('expected 6 fields');
  }
  if (!KID.test(kid)) throw malformed('bad key id');
  return {
    kid,
    wrapIv: decodeField(wrapIv, 'wrap iv', IV_BYTES),
    wrappedKey: decodeField(wrappedKey, 'wrapped key', WRAPPED_KEY_BYTES),
    iv: decodeField(iv, 'iv', IV_BYTES),
    ciphertext: decodeField(ciphertext, 'ciphertext', TAG_BYTES, Number.MAX_SAFE_INTEGER),
  };
}
