import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertObjectKey, MAX_OBJECT_KEY_BYTES, OBJECT_STORE_ERROR, ObjectStoreError } from '../../../runtime/objects/index.js';

const test = suite('runtime/objects/object-key');

function refused(key: string): ObjectStoreError {
  try {
    assertObjectKey(key);
  } catch (err) {
    assert.instance(err, ObjectStoreError);
    assert.is((err as ObjectStoreError).code, OBJECT_STORE_ERROR.INVALID_KEY);
    return err as ObjectStoreError;
  }
  assert.unreachable(`accepted ${JSON.stringify(key)}`);
  throw new Error('unreachable');
}

test('accepts ordinary hierarchical keys, dots inside segments and non-ASCII', () => {
  for (const key of ['a', 'ws_1/runs/run_1/checkpoints/000001', 'x/.hidden', 'x/..dots', 'a.b/c..d', 'héllo/世界', 'with space/%7E~']) {
    assertObjectKey(key);
  }
});

test('accepts exactly 1024 UTF-8 bytes and refuses 1025, counting multi-byte characters', () => {
  assertObjectKey('a'.repeat(MAX_OBJECT_KEY_BYTES));
  refused('a'.repeat(MAX_OBJECT_KEY_BYTES + 1));
  refused('é'.repeat(513));
});

test('refuses empty keys, absolute keys, empty segments, . and .. segments', () => {
  for (const key of ['', '/a', 'a/', 'a//b', '.', '..', 'a/../b', 'a/./b', '../a', 'a/..']) refused(key);
});

test('refuses backslashes, NUL, other control characters and lone surrogates', () => {
  for (const key of ['a\\b', 'a\u0000b', 'a\nb', 'a\rb', 'a\u007fb', 'a\u0085b', 'a\ud800b', 'a\udc00']) refused(key);
});

test('does not echo the refused key in the message', () => {
  assert.not.match(refused('secret-ws/../x').message, 'secret-ws');
});

test.run();
