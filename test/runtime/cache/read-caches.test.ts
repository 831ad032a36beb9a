import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LruCache, ReadCaches, tagOf } from '../../../runtime/index.js';

const test = suite('runtime/cache/read-caches');

const live = (maxEntries = 100, ttlMs = 60_000): ReadCaches => {
  const caches = new ReadCaches({ enabled: true, maxEntries, ttlMs });
  caches.setLive(true);
  return caches;
};

test('a hit costs no load; a change naming a tag drops the entry', async () => {
  const caches = live();
  let loads = 0;
  const load = async () => ({ id: 'a1', n: ++loads });
  const tags = () => ({ tags: [tagOf('agent', 'a1')] });
  assert.is((await caches.read('a:a1', load, tags))?.n, 1);
  assert.is((await caches.read('a:a1', load, tags))?.n, 1);
  caches.invalidate([{ kind: 'agent', id: 'other' }]);
  assert.is((await caches.read('a:a1', load, tags))?.n, 1);
  caches.invalidate([{ kind: 'agent', id: 'a1' }]);
  assert.is((await caches.read('a:a1', load, tags))?.n, 2);
});

test('not live: every read loads and nothing is stored; going live starts empty', async () => {
  const caches = new ReadCaches({ enabled: true, maxEntries: 10, ttlMs: 60_000 });
  let loads = 0;
  const load = async () => ({ n: ++loads });
  await caches.read('k', load, () => ({ tags: [] }));
  await caches.read('k', load, () => ({ tags: [] }));
  assert.is(loads, 2);
  assert.is(caches.size, 0);
  caches.setLive(true);
  await caches.read('k', load, () => ({ tags: [] }));
  assert.is(caches.size, 1);
  caches.setLive(false);
  assert.is(caches.size, 0);
});

test('a value loaded while an invalidation happened is not stored (it may predate the commit)', async () => {
  const caches = live();
  let release: () => void = () => undefined;
  const slow = caches.read('a:x', () => new Promise<{ v: number }>((resolve) => (release = () => resolve({ v: 1 }))), () => ({ tags: [tagOf('agent', 'x')] }));
  caches.invalidate([{ kind: 'agent', id: 'x' }]);
  release();
  assert.equal(await slow, { v: 1 });
  assert.is(caches.size, 0);
});

test('an entry never outlives the expiry it carries, nor the TTL', async () => {
  const caches = live(100, 60_000);
  let loads = 0;
  const load = async () => ({ n: ++loads });
  await caches.read('s:1', load, () => ({ tags: [], expiresAt: Date.now() + 30 }));
  await caches.read('s:1', load, () => ({ tags: [] }));
  assert.is(loads, 1);
  await new Promise((r) => setTimeout(r, 40));
  await caches.read('s:1', load, () => ({ tags: [] }));
  assert.is(loads, 2);
  const short = live(100, 20);
  await short.read('k', load, () => ({ tags: [] }));
  await new Promise((r) => setTimeout(r, 30));
  await short.read('k', load, () => ({ tags: [] }));
  assert.is(loads, 4);
});

test('a hit the request does not accept (another workspace) reads the database instead', async () => {
  const caches = live();
  await caches.read('a:1', async () => ({ workspace_id: 'w1' }), () => ({ tags: [] }));
  const other = await caches.read('a:1', async () => null, () => ({ tags: [] }), (row: { workspace_id: string }) => row.workspace_id === 'w2');
  assert.is(other, null);
  assert.equal(await caches.read('a:1', async () => null, () => ({ tags: [] }), (row: { workspace_id: string }) => row.workspace_id === 'w1'), { workspace_id: 'w1' });
});

test('holds at most max_entries, dropping the least recently used; cached values are frozen', async () => {
  const lru = new LruCache(3);
  for (const key of ['a', 'b', 'c']) lru.set(key, { value: key, expiresAt: Infinity, tags: [] });
  lru.get('a', 0);
  lru.set('d', { value: 'd', expiresAt: Infinity, tags: [] });
  assert.is(lru.size, 3);
  assert.is(lru.get('b', 0), undefined);
  assert.ok(lru.get('a', 0));
  const caches = live(2);
  const value = await caches.read('x', async () => ({ nested: { n: 1 } }), () => ({ tags: [] }));
  assert.ok(Object.isFrozen(value) && Object.isFrozen(value!.nested));
});

test('API key use is recorded at most once a minute per key, from an in-process timestamp', () => {
  const caches = live();
  const now = Date.now();
  assert.ok(caches.shouldTouch('k1', 0, now));
  assert.not.ok(caches.shouldTouch('k1', 0, now + 1_000));
  assert.not.ok(caches.shouldTouch('k2', now - 10_000, now));
  assert.ok(caches.shouldTouch('k1', 0, now + 61_000));
});

test.run();
