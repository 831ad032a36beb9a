import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliverOutbox } from '../../jobs/index.js';
import { publishEvent, verifyWebhookSignature, withTransaction } from '../../runtime/index.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { seedOrganization } from '../support/identity.js';
import { addSubscription, metricValue, openJobHarness, Receiver, type JobHarness } from './job-harness.js';

const test = suite('jobs/webhook-delivery');
let db: TestDatabase;
let harness: JobHarness;
let receiver: Receiver;
let workspaceId: string;

test.before(async () => {
  db = await createTestDatabase('whdel');
  receiver = await new Receiver().start();
  harness = await openJobHarness(db.url, {
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([receiver.origin]),
    SVC_OUTBOX__BY_KIND: JSON.stringify({ webhook: { max_attempts: 3, lease_seconds: 4 } }),
  });
  workspaceId = (await seedOrganization(db.url)).workspace_id;
});
test.after(async () => {
  await harness?.close();
  await receiver?.stop();
  await db?.drop();
});

const publish = (type: 'run.completed' | 'run.failed', data: unknown) => withTransaction(harness.services.pool, (tx) => publishEvent(tx, { workspace_id: workspaceId, type, data }));
const makeDue = () => query(db.url, `update outbox set next_attempt_at = now() - interval '1 second' where state = 'pending'`);
const row = async (id: string) => (await query<Record<string, any>>(db.url, `select * from outbox where id = $1`, [id]))[0]!;

test('a receiver that fails then succeeds gets the same webhook-id with valid fresh signatures', async () => {
  const sub = await addSubscription(harness.services, workspaceId, `${receiver.origin}/flaky`, ['run.completed']);
  receiver.reply = (_hit, i) => ({ status: i === 0 ? 503 : 204 });
  const published = await publish('run.completed', { run_id: 'run_1' });
  assert.is(published.delivery_ids.length, 1);
  const id = published.delivery_ids[0]!;
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  let current = await row(id);
  assert.is(current.state, 'pending');
  assert.is(current.attempts, 1);
  assert.is(current.last_status_code, 503);
  assert.ok(new Date(current.next_attempt_at).getTime() > Date.now(), 'backs off before the next try');
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  assert.is(receiver.hits.length, 1, 'not retried before its time');
  await makeDue();
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  current = await row(id);
  assert.is(current.state, 'delivered');
  assert.is(receiver.hits.length, 2);
  for (const hit of receiver.hits) {
    assert.is(hit.headers['webhook-id'], id);
    assert.ok(verifyWebhookSignature(sub.secret, id, String(hit.headers['webhook-timestamp']), hit.body, String(hit.headers['webhook-signature'])), 'signature verifies');
    assert.ok(Math.abs(Number(hit.headers['webhook-timestamp']) - Date.now() / 1000) < 300, 'timestamp is current');
  }
  assert.is(receiver.hits[0]!.body, receiver.hits[1]!.body, 'the same body each time');
  const body = JSON.parse(receiver.hits[1]!.body);
  assert.equal(Object.keys(body).sort(), ['created_at', 'data', 'id', 'type', 'workspace_id']);
  assert.is(body.type, 'run.completed');
  assert.is(body.id, published.event_id);
  assert.equal(body.data, { run_id: 'run_1' });
  const other = await publish('run.failed', {});
  assert.is(other.delivery_ids.length, 0, 'the event filter excludes run.failed');
});

test('a receiver that always fails ends dead after max_attempts and svc_outbox_dead turns 1', async () => {
  receiver.hits.length = 0;
  await query(db.url, `delete from subscriptions`);
  await addSubscription(harness.services, workspaceId, `${receiver.origin}/down`, ['run.failed']);
  receiver.reply = () => ({ status: 500, body: 'down' });
  const id = (await publish('run.failed', {})).delivery_ids[0]!;
  assert.is(await metricValue(harness.services, 'svc_outbox_dead', { kind: 'webhook' }), 0);
  for (let i = 0; i < 3; i++) {
    await makeDue();
    await deliverOutbox(harness.context, { kinds: ['webhook'] });
  }
  const dead = await row(id);
  assert.is(dead.state, 'dead');
  assert.is(dead.attempts, 3);
  assert.is(dead.last_response, 'down');
  await makeDue();
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  assert.is(receiver.hits.length, 3, 'a dead row is not tried again');
  assert.is(await metricValue(harness.services, 'svc_outbox_dead', { kind: 'webhook' }), 1);
  assert.is(await metricValue(harness.services, 'svc_outbox_deliveries_total', { kind: 'webhook', outcome: 'dead' }), 1);
});

test('redirects are not followed, response bodies are capped, and a hanging receiver times out', async () => {
  await query(db.url, `delete from subscriptions`);
  receiver.hits.length = 0;
  await addSubscription(harness.services, workspaceId, `${receiver.origin}/moved`, ['run.completed']);
  receiver.reply = (hit) => (hit.path === '/moved' ? { status: 302, headers: { location: `${receiver.origin}/target` } } : { status: 200 });
  const redirected = (await publish('run.completed', {})).delivery_ids[0]!;
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  assert.equal(receiver.hits.map((h) => h.path), ['/moved']);
  assert.is((await row(redirected)).last_status_code, 302);
  assert.is((await row(redirected)).state, 'pending');

  await query(db.url, `delete from subscriptions`);
  await addSubscription(harness.services, workspaceId, `${receiver.origin}/big`, ['run.completed']);
  receiver.reply = () => ({ status: 200, body: 'x'.repeat(20_000) });
  const big = (await publish('run.completed', {})).delivery_ids[0]!;
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  assert.is((await row(big)).state, 'delivered');
  assert.is((await row(big)).last_response.length, 4096);

  await query(db.url, `delete from subscriptions`);
  await addSubscription(harness.services, workspaceId, `${receiver.origin}/slow`, ['run.completed']);
  receiver.reply = () => ({ status: 200, delayMs: 5000 });
  const slow = (await publish('run.completed', {})).delivery_ids[0]!;
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  const timedOut = await row(slow);
  assert.is(timedOut.state, 'pending');
  assert.match(timedOut.last_error, /timed out|abort/i);
});

test('a redelivered dead row goes out again with the same webhook-id', async () => {
  await query(db.url, `delete from subscriptions`);
  receiver.hits.length = 0;
  await addSubscription(harness.services, workspaceId, `${receiver.origin}/again`, ['run.completed']);
  receiver.reply = () => ({ status: 200 });
  const id = (await publish('run.completed', {})).delivery_ids[0]!;
  await query(db.url, `update outbox set state = 'dead', settled_at = now(), attempts = 3 where id = $1`, [id]);
  const { redeliverOutboxRow } = await import('../../runtime/index.js');
  const again = await redeliverOutboxRow(harness.services.pool, workspaceId, id, 'webhook');
  assert.is(again?.state, 'pending');
  assert.is(again?.attempts, 0);
  await deliverOutbox(harness.context, { kinds: ['webhook'] });
  assert.is((await row(id)).state, 'delivered');
  assert.equal(receiver.hits.map((h) => h.headers['webhook-id']), [id]);
});

test.run();
