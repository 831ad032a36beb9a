import { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

// GET /runs/{id}/items serves the running attempt's tail snapshot, and only its: a snapshot an
// earlier attempt left in the store (its successor not anchored yet, or — before the store
// refused it — a zombie's late write) holds items that are no longer the run's.
const test = suite('actors/run-engine/items-stale-tail');
let f: RunFixture;
let redis: Redis;

test.before(async () => {
  f = await startRunFixture({ kvUrl: 'redis://127.0.0.1:6379', tokenDelayMs: 300 });
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
});
test.after(async () => {
  redis?.disconnect();
  await f?.stop();
});

test("a snapshot of an earlier attempt is not the running run's tail", async () => {
  const posted = await send(f, 'hello');
  const runId: string = posted.body.run.id;
  const items = async () => (await f.client.get(`/api/v1/runs/${runId}/items?limit=100`)).body;
  // The answer streams for ~1.5 s: read while its item is in the live tail.
  await until(items, (p) => p.items.some((i: { state: string }) => i.state === 'in_progress'), 10_000);
  const [key] = await redis.keys(`*tail:${runId}`);
  assert.ok(key, 'the running attempt has a tail snapshot in Redis');
  // What an earlier attempt would have left: its own uncommitted item, at a later ordinal. The
  // running attempt's next snapshot replaces it; a page read while it was in place (it is still
  // there after the read) is the one that counts.
  for (let seen = false, tries = 0; !seen; tries++) {
    assert.ok(tries < 20, 'the stale snapshot never stayed in place for a whole read');
    const snapshot = JSON.parse((await redis.get(key!))!);
    assert.is(snapshot.attempt, 1);
    const stale = { ...snapshot, attempt: 0, items: [...snapshot.items, { ordinal: 99, id: 'itm_stale', kind: 'message', state: 'in_progress', content: { text: 'not this attempt' } }] };
    await redis.set(key!, JSON.stringify(stale), 'KEEPTTL');
    const page = await items();
    seen = JSON.parse((await redis.get(key!)) ?? '{}').attempt === 0;
    if (seen) assert.not.ok(page.items.some((i: { id: string }) => i.id === 'itm_stale'), "an earlier attempt's item was served as the tail");
  }
  await waitForRun(f, runId, ['completed']);
});

test.run();
