import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliverOutbox } from '../../jobs/index.js';
import { claimOutboxBatch, publishEvent, withTransaction } from '../../runtime/index.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { seedOrganization } from '../support/identity.js';
import { addSubscription, openJobHarness, Receiver, type JobHarness } from './job-harness.js';

// Two control processes are modelled by two harnesses: separate pools, separate job contexts.
const test = suite('jobs/outbox-leases');
let db: TestDatabase;
let one: JobHarness;
let two: JobHarness;
let receiver: Receiver;
let workspaceId: string;
// Replicas share the key ring (as a deployment must), or one could not decrypt the other's secrets.
const keyDir = mkdtempSync(join(tmpdir(), 'svc-lease-keys-'));

test.before(async () => {
  db = await createTestDatabase('lease');
  receiver = await new Receiver().start();
  const env = {
    SVC_ENCRYPTION__KEY_FILE: join(keyDir, 'keyring.json'),
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([receiver.origin]),
    SVC_OUTBOX__BY_KIND: JSON.stringify({ webhook: { batch: 8, parallel: 4, lease_seconds: 30 } }),
  };
  one = await openJobHarness(db.url, env);
  two = await openJobHarness(db.url, env);
  workspaceId = (await seedOrganization(db.url)).workspace_id;
  await addSubscription(one.services, workspaceId, `${receiver.origin}/hook`, ['run.completed']);
});
test.after(async () => {
  await one?.close();
  await two?.close();
  await receiver?.stop();
  await db?.drop();
  rmSync(keyDir, { recursive: true, force: true });
});

test('two senders racing on separate pools deliver every row exactly once', async () => {
  receiver.reply = () => ({ status: 200, delayMs: 20 });
  const ids: string[] = [];
  await withTransaction(one.services.pool, async (tx) => {
    for (let i = 0; i < 40; i++) ids.push(...(await publishEvent(tx, { workspace_id: workspaceId, type: 'run.completed', data: { i } })).delivery_ids);
  });
  const [a, b] = await Promise.all([deliverOutbox(one.context, { kinds: ['webhook'] }), deliverOutbox(two.context, { kinds: ['webhook'] })]);
  const perId = new Map<string, number>();
  for (const hit of receiver.hits) perId.set(String(hit.headers['webhook-id']), (perId.get(String(hit.headers['webhook-id'])) ?? 0) + 1);
  assert.is(perId.size, 40);
  assert.ok([...perId.values()].every((n) => n === 1), 'no webhook-id was sent twice');
  assert.is(a.webhook!.delivered + b.webhook!.delivered, 40);
  const states = await query<{ state: string; n: number }>(db.url, `select state, count(*)::int as n from outbox group by state`);
  assert.equal(states, [{ state: 'delivered', n: 40 }]);
});

test('a claimed row is invisible to other senders until its lease runs out, then taken over', async () => {
  receiver.hits.length = 0;
  receiver.reply = () => ({ status: 200 });
  const id = (await withTransaction(one.services.pool, (tx) => publishEvent(tx, { workspace_id: workspaceId, type: 'run.completed', data: {} }))).delivery_ids[0]!;
  // Sender one claims and "crashes" (never settles).
  const claim = await claimOutboxBatch(one.services.pool, { kind: 'webhook', batch: 8, lease_seconds: 30 });
  assert.equal(claim.rows.map((r) => r.id), [id]);
  const during = await deliverOutbox(two.context, { kinds: ['webhook'] });
  assert.is(during.webhook!.claimed, 0, 'leased: not claimable');
  assert.is(receiver.hits.length, 0);
  await query(db.url, `update outbox set lease_until = now() - interval '1 second' where id = $1`, [id]);
  const after = await deliverOutbox(two.context, { kinds: ['webhook'] });
  assert.is(after.webhook!.delivered, 1);
  const [row] = await query<{ state: string; attempts: number }>(db.url, `select state, attempts from outbox where id = $1`, [id]);
  assert.equal(row, { state: 'delivered', attempts: 2 }, 'the crashed attempt counts');
  const { markOutboxDelivered } = await import('../../runtime/index.js');
  assert.is(await markOutboxDelivered(one.services.pool, id, claim.token, {}), false, 'the stale holder cannot settle');
});

test.run();
