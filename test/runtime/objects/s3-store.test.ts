import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createS3Store, OBJECT_STORE_ERROR, type ObjectStore, ObjectStoreError, type S3StoreOptions } from '../../../runtime/objects/index.js';
import { objectStoreContract } from './object-store-contract.js';
import { type RunningS3rver, startS3rver, TEST_BUCKET } from './s3rver-harness.js';

const test = suite('runtime/objects/s3-store');

let s3rver: RunningS3rver | undefined;
let opened: ObjectStore[] = [];

function options(endpoint: string): S3StoreOptions {
  return {
    bucket: TEST_BUCKET,
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  };
}

function open(overrides: Partial<S3StoreOptions> = {}): ObjectStore {
  if (s3rver === undefined) throw new Error('s3rver not started');
  const store = createS3Store({ ...options(s3rver.endpoint), ...overrides });
  opened.push(store);
  return store;
}

// The bucket is shared by the file's tests; emptying it first gives each test a fresh store.
async function emptied(): Promise<ObjectStore> {
  const store = open();
  for (;;) {
    const page = await store.list('');
    await Promise.all(page.keys.map((k) => store.delete(k)));
    if (page.next === undefined) return store;
  }
}

test.before(async () => {
  s3rver = await startS3rver();
});
test.after.each(async () => {
  await Promise.all(opened.map((s) => s.close()));
  opened = [];
});
test.after(async () => {
  await s3rver?.dispose();
});

objectStoreContract(test, { store: emptied });

async function assertUnavailable(promise: Promise<unknown>): Promise<void> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, ObjectStoreError);
    assert.is((err as ObjectStoreError).code, OBJECT_STORE_ERROR.UNAVAILABLE);
    assert.not.match((err as Error).message, 'S3RVER', 'no credentials in the message');
    return;
  }
  assert.unreachable('expected object_store_unavailable');
}

test('a bucket that does not exist fails check, get, put and delete instead of reading as empty', async () => {
  const store = open({ bucket: 'no-such-bucket' });
  await assertUnavailable(store.check());
  await assertUnavailable(store.get('k'));
  await assertUnavailable(store.put('k', new Uint8Array([1])));
  await assertUnavailable(store.delete('k'));
});

// Last: it stops the server the other tests use.
test('check and operations fail with object_store_unavailable once s3rver is stopped', async () => {
  const store = open({ maxAttempts: 1 });
  await store.check();
  await s3rver?.stop();
  await assertUnavailable(store.check());
  await assertUnavailable(store.get('any'));
  await assertUnavailable(store.put('any', new Uint8Array([1])));
});

test.run();
