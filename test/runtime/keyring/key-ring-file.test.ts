import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { credentialAad, KEY_RING_ERROR, KeyRingError, loadOrCreateKeyRing, rotateKeyRingFile } from '../../../runtime/keyring/index.js';

const test = suite('runtime/keyring/key-ring-file');

const AAD = credentialAad('ws_1', 'mp_1', 'api_key');
let dir = '';
let files = 0;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-keyring-'));
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function freshPath(): string {
  files += 1;
  return join(dir, `case-${files}`, 'keyring.json');
}

async function rejectsCode(promise: Promise<unknown>, code: string): Promise<KeyRingError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, KeyRingError);
    assert.is((err as KeyRingError).code, code);
    return err as KeyRingError;
  }
  assert.unreachable(`expected ${code}`);
  throw new Error('unreachable');
}

test('creates a 0600 file with one key on first use and loads the same keys afterwards', async () => {
  const path = freshPath();
  const first = await loadOrCreateKeyRing(path);
  assert.is((await stat(path)).mode & 0o777, 0o600);
  const json = JSON.parse(await readFile(path, 'utf8')) as { active: string; keys: Record<string, string> };
  assert.is(json.active, first.activeKeyId);
  assert.equal(Object.keys(json.keys), [first.activeKeyId]);
  assert.is(Buffer.from(json.keys[first.activeKeyId] as string, 'base64').length, 32);
  const before = await readFile(path, 'utf8');
  const second = await loadOrCreateKeyRing(path);
  assert.is(await readFile(path, 'utf8'), before, 'an existing file is never rewritten');
  assert.is(second.activeKeyId, first.activeKeyId);
  assert.is(second.decrypt(first.encrypt('sk-1', AAD), AAD).toString(), 'sk-1');
});

test('concurrent first loads all end with the one same key ring and leave no temp files', async () => {
  const path = freshPath();
  const rings = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateKeyRing(path)));
  const [first] = rings;
  if (first === undefined) throw new Error('no ring');
  const token = first.encrypt('shared', AAD);
  for (const ring of rings) {
    assert.is(ring.activeKeyId, first.activeKeyId);
    assert.is(ring.decrypt(token, AAD).toString(), 'shared');
  }
  assert.equal(await readdir(join(path, '..')), ['keyring.json']);
});

test('refuses malformed files without replacing them or echoing their content', async () => {
  const cases = [
    '',
    'not json',
    '{"active":"k1"}',
    '{"active":"k1","keys":{"k1":"c2hvcnQ="}}',
    '{"active":"k2","keys":{"k1":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}',
  ];
  for (const content of cases) {
    const path = freshPath();
    await loadOrCreateKeyRing(path); // creates the folder; then replace the file
    await writeFile(path, content);
    const err = await rejectsCode(loadOrCreateKeyRing(path), KEY_RING_ERROR.INVALID_KEY_RING);
    assert.match(err.message, path);
    if (content.length > 0) assert.not.match(err.message, content);
    assert.is(await readFile(path, 'utf8'), content, 'the malformed file is left alone');
  }
});

test('rotateKeyRingFile adds an active key, keeps the old one and stays 0600', async () => {
  const path = freshPath();
  const before = await loadOrCreateKeyRing(path);
  const oldToken = before.encrypt('old', AAD);
  const rotated = await rotateKeyRingFile(path);
  assert.is.not(rotated.activeKeyId, before.activeKeyId);
  assert.is((await stat(path)).mode & 0o777, 0o600);
  const reloaded = await loadOrCreateKeyRing(path);
  assert.is(reloaded.activeKeyId, rotated.activeKeyId);
  assert.is(reloaded.decrypt(oldToken, AAD).toString(), 'old');
  assert.is(reloaded.keyIdOf(reloaded.encrypt('new', AAD)), rotated.activeKeyId);
});

test('rotateKeyRingFile refuses a missing file', async () => {
  await rejectsCode(rotateKeyRingFile(freshPath()), KEY_RING_ERROR.KEY_RING_IO);
});

test.run();
