import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  addActiveKey,
  createKeyRing,
  credentialAad,
  generateKeyRingSpec,
  KEY_RING_ERROR,
  KeyRingError,
  type KeyRingSpec,
} from '../../../runtime/keyring/index.js';

const test = suite('runtime/keyring/key-ring');

const AAD = credentialAad('ws_1', 'mp_1', 'api_key');

function throwsCode(fn: () => unknown, code: string): KeyRingError {
  try {
    fn();
  } catch (err) {
    assert.instance(err, KeyRingError);
    assert.is((err as KeyRingError).code, code);
    return err as KeyRingError;
  }
  assert.unreachable(`expected ${code}`);
  throw new Error('unreachable');
}

/** Flips one bit of one base64url field of a token, keeping it well-formed. */
function tamper(token: string, field: number): string {
  const parts = token.split('.');
  const bytes = Buffer.from(parts[field] as string, 'base64url');
  bytes[0] = (bytes[0] as number) ^ 1;
  parts[field] = bytes.toString('base64url');
  return parts.join('.');
}

test('round-trips text and binary values', () => {
  const ring = createKeyRing(generateKeyRingSpec());
  const text = 'sk-live-ünïcode-🙂';
  assert.is(ring.decrypt(ring.encrypt(text, AAD), AAD).toString('utf8'), text);
  const binary = randomBytes(1000);
  assert.ok(ring.decrypt(ring.encrypt(binary, AAD), AAD).equals(binary));
  assert.is(ring.decrypt(ring.encrypt('', AAD), AAD).length, 0);
});

test('tokens are versioned, carry the active key id and never the plaintext', () => {
  const ring = createKeyRing(generateKeyRingSpec());
  const token = ring.encrypt('sk-secret-value', AAD);
  const parts = token.split('.');
  assert.is(parts.length, 6);
  assert.is(parts[0], 'v1');
  assert.is(parts[1], ring.activeKeyId);
  assert.is(ring.keyIdOf(token), ring.activeKeyId);
  assert.not.match(token, 'sk-secret');
  assert.is.not(ring.encrypt('sk-secret-value', AAD), token, 'fresh data key and IV per value');
});

test('decrypt fails with decrypt_failed when the AAD differs in workspace, provider or field', () => {
  const ring = createKeyRing(generateKeyRingSpec());
  const token = ring.encrypt('sk-secret-value', AAD);
  for (const other of [credentialAad('ws_2', 'mp_1', 'api_key'), credentialAad('ws_1', 'mp_2', 'api_key'), credentialAad('ws_1', 'mp_1', 'org_id'), '']) {
    const err = throwsCode(() => ring.decrypt(token, other), KEY_RING_ERROR.DECRYPT_FAILED);
    assert.not.match(err.message, 'sk-secret');
  }
});

test('decrypt fails with decrypt_failed when any encrypted field is tampered', () => {
  const ring = createKeyRing(generateKeyRingSpec());
  const token = ring.encrypt('sk-secret-value', AAD);
  for (const field of [2, 3, 4, 5]) throwsCode(() => ring.decrypt(tamper(token, field), AAD), KEY_RING_ERROR.DECRYPT_FAILED);
});

test('decrypt fails with malformed_secret on a truncated, re-versioned or non-base64url token', () => {
  const ring = createKeyRing(generateKeyRingSpec());
  const token = ring.encrypt('x', AAD);
  throwsCode(() => ring.decrypt(token.split('.').slice(0, 5).join('.'), AAD), KEY_RING_ERROR.MALFORMED_SECRET);
  throwsCode(() => ring.decrypt(token.replace(/^v1/, 'v9'), AAD), KEY_RING_ERROR.MALFORMED_SECRET);
  throwsCode(() => ring.decrypt(`${token}!`, AAD), KEY_RING_ERROR.MALFORMED_SECRET);
  throwsCode(() => ring.decrypt('not a token', AAD), KEY_RING_ERROR.MALFORMED_SECRET);
});

test('decrypt fails with unknown_key for a token from another ring', () => {
  const a = createKeyRing(generateKeyRingSpec());
  const b = createKeyRing(generateKeyRingSpec());
  throwsCode(() => b.decrypt(a.encrypt('x', AAD), AAD), KEY_RING_ERROR.UNKNOWN_KEY);
});

test('a token relabelled with another key id of the same ring fails', () => {
  const rotated = addActiveKey(generateKeyRingSpec());
  const ring = createKeyRing(rotated);
  const token = ring.encrypt('x', AAD);
  const otherKid = ring.keyIds.find((k) => k !== ring.activeKeyId) as string;
  const parts = token.split('.');
  parts[1] = otherKid;
  throwsCode(() => ring.decrypt(parts.join('.'), AAD), KEY_RING_ERROR.DECRYPT_FAILED);
});

test('rotation keeps old values decryptable, encrypts new ones under the new key, and rewraps', () => {
  const first = generateKeyRingSpec();
  const old = createKeyRing(first);
  const oldToken = old.encrypt('old secret', AAD);
  const ring = createKeyRing(addActiveKey(first));
  assert.is.not(ring.activeKeyId, old.activeKeyId);
  assert.equal([...ring.keyIds].sort(), [old.activeKeyId, ring.activeKeyId].sort());
  assert.is(ring.decrypt(oldToken, AAD).toString(), 'old secret');
  const newToken = ring.encrypt('new secret', AAD);
  assert.is(ring.keyIdOf(newToken), ring.activeKeyId);
  const rewrapped = ring.rewrap(oldToken, AAD);
  assert.is(ring.keyIdOf(rewrapped), ring.activeKeyId);
  assert.is(ring.decrypt(rewrapped, AAD).toString(), 'old secret');
  assert.is(ring.rewrap(newToken, AAD), newToken);
  throwsCode(() => ring.rewrap(oldToken, credentialAad('ws_2', 'mp_1', 'api_key')), KEY_RING_ERROR.DECRYPT_FAILED);
});

test('createKeyRing refuses a bad shape, a missing active key, bad key ids and keys not 32 bytes', () => {
  const kid = 'k1';
  const good = randomBytes(32).toString('base64');
  const bad: unknown[] = [
    null,
    {},
    { active: kid },
    { active: kid, keys: {} },
    { active: 'k2', keys: { [kid]: good } },
    { active: kid, keys: { [kid]: randomBytes(16).toString('base64') } },
    { active: kid, keys: { [kid]: `${good.slice(0, -2)}!!` } },
    { active: 'bad.kid', keys: { 'bad.kid': good } },
    { active: kid, keys: { [kid]: good, 'has space': good } },
    { active: kid, keys: { [kid]: 42 } },
  ];
  for (const spec of bad) {
    const err = throwsCode(() => createKeyRing(spec as KeyRingSpec, 'test config'), KEY_RING_ERROR.INVALID_KEY_RING);
    assert.match(err.message, 'test config');
    assert.not.match(err.message, good);
  }
});

test('the ring object exposes no key material when logged or serialized', () => {
  const spec = generateKeyRingSpec();
  const ring = createKeyRing(spec);
  const key = Object.values(spec.keys)[0] as string;
  assert.not.match(JSON.stringify(ring), key);
  assert.not.match(JSON.stringify(ring), Buffer.from(key, 'base64').toString('hex'));
});

test.run();
