import { randomBytes } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { KEY_RING_ERROR, KeyRingError } from './key-ring-error.js';

// The serialized key ring, shared by the key ring file and the `encryption.*` config keys:
//   {"active": "<kid>", "keys": {"<kid>": "<base64 of 32 bytes>"}}
// Key ids cannot contain `.`, which separates the fields of a token.

export const KEY_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
export const KEY_BYTES = 32;

export const KeyRingSpec = Type.Object(
  {
    active: Type.String({ pattern: KEY_ID_PATTERN }),
    keys: Type.Record(Type.String({ pattern: KEY_ID_PATTERN }), Type.String()),
  },
  { additionalProperties: false },
);
export type KeyRingSpec = Static<typeof KeyRingSpec>;

const KEY_ID = new RegExp(KEY_ID_PATTERN);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(source: string, why: string): KeyRingError {
  return new KeyRingError(KEY_RING_ERROR.INVALID_KEY_RING, `${source}: ${why}`);
}

/** Strict base64 of exactly 32 bytes; Buffer.from alone silently skips bad characters. */
function decodeKey(source: string, kid: string, encoded: string): Buffer {
  const key = Buffer.from(encoded, 'base64');
  if (!BASE64.test(encoded) || key.toString('base64') !== encoded) {
    throw invalid(source, `key "${kid}" is not canonical base64`);
  }
  if (key.length !== KEY_BYTES) throw invalid(source, `key "${kid}" is ${key.length} bytes, expected ${KEY_BYTES}`);
  return key;
}

/**
 * Checks an untrusted value (parsed JSON or config) and returns the keys as bytes. `source`
 * names where it came from (a path, a config key) for the error message; the message never
 * carries key material.
 */
export function parseKeyRingSpec(value: unknown, source: string): { active: string; keys: Map<string, Buffer> } {
  if (!Value.Check(KeyRingSpec, value)) {
    const first = Value.Errors(KeyRingSpec, value).First();
    throw invalid(source, `expected {"active": "<key id>", "keys": {"<key id>": "<base64 of ${KEY_BYTES} bytes>"}}` +
      (first === undefined ? '' : ` (${first.path || '/'}: ${first.message})`));
  }
  const keys = new Map<string, Buffer>();
  for (const [kid, encoded] of Object.entries(value.keys)) {
    // Type.Record checks key patterns only loosely across TypeBox versions; check again.
    if (!KEY_ID.test(kid)) throw invalid(source, `bad key id "${kid.slice(0, 64)}"`);
    keys.set(kid, decodeKey(source, kid, encoded));
  }
  if (!keys.has(value.active)) throw invalid(source, `active key "${value.active}" is not among the keys`);
  return { active: value.active, keys };
}

/** A new random key id: sortable by creation day for operators, unique by its random tail. */
export function newKeyId(now: Date = new Date()): string {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  return `k${day}_${randomBytes(4).toString('hex')}`;
}

/** A spec holding one fresh random key, active. */
export function generateKeyRingSpec(): KeyRingSpec {
  const kid = newKeyId();
  return { active: kid, keys: { [kid]: randomBytes(KEY_BYTES).toString('base64') } };
}

/**
 * Rotation: a copy of `spec` with one more fresh key, made active. Older keys stay so that
 * values encrypted under them keep decrypting; re-encrypt (KeyRing.rewrap) before removing one.
 */
export function addActiveKey(spec: KeyRingSpec): KeyRingSpec {
  let kid = newKeyId();
  while (kid in spec.keys) kid = newKeyId();
  return { active: kid, keys: { ...spec.keys, [kid]: randomBytes(KEY_BYTES).toString('base64') } };
}
