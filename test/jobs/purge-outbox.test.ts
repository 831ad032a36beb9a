import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { purgeOutbox } from '../../jobs/index.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { openJobHarness, type JobHarness } from './job-harness.js';

const test = suite('jobs/purge-outbox');
let db: TestDatabase;
let harness: JobHarness;

test.before(async () => {
  db = await createTestDatabase('purge');
  harness = await openJobHarness(db.url, {
    SVC_OUTBOX__DEFAULTS: JSON.stringify({ purge_batch: 2, delivered_retention_seconds: 3600, dead_retention_seconds: 7200 }),
    SVC_OUTBOX__BY_KIND: JSON.stringify({ email: { delivered_retention_seconds: 60 } }),
  });
});
test.after(async () => {
  await harness?.close();
  await db?.drop();
});

async function seed(kind: string, state: string, ageSeconds: number, count = 1): Promise<void> {
  await query(
    db.url,
    `insert into outbox (id, kind, payload, state, created_at, settled_at)
     select 'obx_' || md5(random()::text), $1, '{}', $2, now() - make_interval(secs => $3), case when $2 = 'pending' then null else now() - make_interval(secs => $3) end
       from generate_series(1, $4)`,
    [kind, state, ageSeconds, count],
  );
}
const count = async (kind: string, state: string) => (await query<{ n: number }>(db.url, `select count(*)::int as n from outbox where kind = $1 and state = $2`, [kind, state]))[0]!.n;

test('removes settled rows past their kind\'s retention in batches, keeps pending and recent rows', async () => {
  await seed('webhook', 'delivered', 4000, 5); // past 3600: purged
  await seed('webhook', 'delivered', 100, 2); // recent: kept
  await seed('webhook', 'dead', 4000, 3); // dead retention 7200: kept
  await seed('webhook', 'dead', 8000, 1); // purged
  await seed('webhook', 'pending', 1_000_000, 2); // pending work is never purged
  await seed('email', 'delivered', 100, 3); // email retention 60 (per-kind override): purged
  const result = await purgeOutbox(harness.context);
  assert.equal(result.webhook, { ran: true, deleted: 6, batches: 4 }, "delivered: 2+2+1 rows; dead: 1 row (one short statement each)");
  assert.is(result.email.deleted, 3);
  assert.is(await count('webhook', 'delivered'), 2);
  assert.is(await count('webhook', 'dead'), 3);
  assert.is(await count('webhook', 'pending'), 2);
  assert.is(await count('email', 'delivered'), 0);
});

test('a kind is purged once per its purge_interval_seconds, whichever replica asks', async () => {
  await seed('webhook', 'delivered', 4000, 1);
  const again = await purgeOutbox(harness.context);
  assert.is(again.webhook.ran, false);
  assert.is(await count('webhook', 'delivered'), 3);
  await query(db.url, `update outbox_kind_states set purged_at = now() - interval '61 seconds'`);
  const later = await purgeOutbox(harness.context);
  assert.is(later.webhook.ran, true);
  assert.is(later.webhook.deleted, 1);
});

test.run();
