import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createDirectoryStore, OBJECT_STORE_ERROR, type ObjectStore, ObjectStoreError } from '../../../runtime/objects/index.js';
import { objectStoreContract } from './object-store-contract.js';

const test = suite('runtime/objects/directory-store');

let base = '';
let opened: ObjectStore[] = [];
let roots = 0;

test.before(async () => {
  base = await mkdtemp(join(tmpdir(), 'svc-objects-dir-'));
});
test.after.each(async () => {
  await Promise.all(opened.map((s) => s.close()));
  opened = [];
});
test.after(async () => {
  await rm(base, { recursive: true, force: true });
});

function freshRoot(): string {
  roots += 1;
  return join(base, `root-${roots}`);
}

function open(directory: string): ObjectStore {
  const store = createDirectoryStore({ directory });
  opened.push(store);
  return store;
}

objectStoreContract(test, { store: async () => open(freshRoot()) });

test('lists a key, its byte-order neighbour and keys below it in S3 order', async () => {
  const store = open(freshRoot());
  for (const key of ['a/b', 'a!', 'a', 'a0']) await store.put(key, new Uint8Array([1]));
  assert.equal((await store.list('a')).keys, ['a', 'a!', 'a/b', 'a0']);
  assert.equal((await store.list('', { after: 'a!' })).keys, ['a/b', 'a0']);
});

test('leaves no temporary files and prunes emptied folders after put and delete', async () => {
  const root = freshRoot();
  const store = open(root);
  await store.put('deep/er/key', new Uint8Array([1, 2, 3]));
  await store.put('deep/er/key', new Uint8Array([4]));
  assert.equal(await readdir(join(root, '.tmp')), []);
  await store.delete('deep/er/key');
  assert.equal((await readdir(root)).sort(), ['.tmp']);
});

test('a folder pruned by a delete (here or in another process) is made again by the next put into it', async () => {
  const root = freshRoot();
  const store = open(root);
  const other = open(root);
  await store.put('runs/r1/pages/p1', new Uint8Array([1]));
  // The other process deletes the only object: the folders are pruned behind this store's back.
  await other.delete('runs/r1/pages/p1');
  await store.put('runs/r1/pages/p2', new Uint8Array([2]));
  assert.equal(Array.from((await store.get('runs/r1/pages/p2'))!), [2]);
  await store.delete('runs/r1/pages/p2');
  await store.put('runs/r1/pages/p3', new Uint8Array([3]));
  assert.equal(Array.from((await store.get('runs/r1/pages/p3'))!), [3]);
});

test('a temp folder removed behind the store is made again by the next put', async () => {
  const root = freshRoot();
  const store = open(root);
  await store.put('a', new Uint8Array([1]));
  await rm(join(root, '.tmp'), { recursive: true, force: true });
  await store.put('b', new Uint8Array([2]));
  assert.equal(Array.from((await store.get('b'))!), [2]);
});

test('without fsync (objects.directory_fsync = false) a put is still atomic and readable at once', async () => {
  const store = createDirectoryStore({ directory: freshRoot(), fsync: false });
  opened.push(store);
  await store.put('k/one', new Uint8Array([1, 2]));
  await store.put('k/one', new Uint8Array([3]));
  assert.equal(Array.from((await store.get('k/one'))!), [3]);
});

test('writes object files readable by the owner only', async () => {
  const root = freshRoot();
  const store = open(root);
  await store.put('secret', new Uint8Array([1]));
  const files = await readdir(root);
  const file = files.find((f) => f.startsWith('secret'));
  assert.ok(file);
  assert.is((await stat(join(root, file))).mode & 0o777, 0o600);
});

test('refuses a segment too long for a file name with invalid_object_key', async () => {
  const store = open(freshRoot());
  try {
    await store.put('a/' + '%'.repeat(100), new Uint8Array(0));
    assert.unreachable('expected invalid_object_key');
  } catch (err) {
    assert.instance(err, ObjectStoreError);
    assert.is((err as ObjectStoreError).code, OBJECT_STORE_ERROR.INVALID_KEY);
  }
});

test('ignores foreign files in the root when listing', async () => {
  const root = freshRoot();
  const store = open(root);
  await store.put('kept', new Uint8Array([1]));
  await writeFile(join(root, 'stray.txt'), 'not an object');
  await writeFile(join(root, '%ZZ~obj'), 'not canonical');
  assert.equal((await store.list('')).keys, ['kept']);
});

test('reports a damaged object file as object_corrupt', async () => {
  const root = freshRoot();
  const store = open(root);
  await store.put('damaged', new Uint8Array([1, 2, 3]));
  await writeFile(join(root, 'damaged~obj'), 'garbage');
  for (const op of [() => store.get('damaged'), () => store.head('damaged')]) {
    try {
      await op();
      assert.unreachable('expected object_corrupt');
    } catch (err) {
      assert.is((err as ObjectStoreError).code, OBJECT_STORE_ERROR.CORRUPT);
    }
  }
});

test('check fails with object_store_unavailable when the root cannot be created', async () => {
  const blocker = join(base, 'a-file');
  await writeFile(blocker, 'x');
  const store = open(join(blocker, 'objects'));
  try {
    await store.check();
    assert.unreachable('expected object_store_unavailable');
  } catch (err) {
    assert.instance(err, ObjectStoreError);
    assert.is((err as ObjectStoreError).code, OBJECT_STORE_ERROR.UNAVAILABLE);
  }
});

test.run();
