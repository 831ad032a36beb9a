import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createJobContext, deliverOutbox, type JobContext } from '../../../jobs/index.js';
import { publishEvent, verifyWebhookSignature, withTransaction } from '../../../runtime/index.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { addUser, login, seedOrganization, type Client, type Seeded } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';
import { Receiver } from '../../jobs/job-harness.js';

const test = suite('api/webhooks/subscriptions');
let db: TestDatabase;
let service: TestService;
let seeded: Seeded;
let admin: Client;
let receiver: Receiver;
let jobs: JobContext;

test.before(async () => {
  db = await createTestDatabase('subs');
  receiver = await new Receiver().start();
  service = await startTestService({
    databaseUrl: db.url,
    // Background passes at long intervals: the test runs the sender itself.
    env: { SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([receiver.origin]), SVC_CONTROL__SCAN_SECONDS: '3600', SVC_OUTBOX__BY_KIND: '{"webhook":{"max_attempts":2}}' },
  });
  seeded = await seedOrganization(db.url);
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  jobs = createJobContext(service.services);
});
test.after(async () => {
  await service?.stop();
  await receiver?.stop();
  await db?.drop();
});

test('create shows a whsec_ secret once; get, list, patch with If-Match and delete with the final view', async () => {
  const created = await admin.post('/api/v1/subscriptions', { url: `${receiver.origin}/a`, events: ['run.completed', 'agent.created'], description: 'ci' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.is(Buffer.from(created.body.secret.slice(6), 'base64').length, 32);
  const id = created.body.subscription.id;
  const one = await admin.get(`/api/v1/subscriptions/${id}`);
  assert.is(one.status, 200);
  assert.not.ok('secret' in one.body);
  assert.not.ok(JSON.stringify(one.body).includes('whsec_'));
  assert.equal(one.body.events, ['run.completed', 'agent.created']);
  assert.is((await admin.get('/api/v1/subscriptions')).body.items.length, 1);
  assert.is((await admin.patch(`/api/v1/subscriptions/${id}`, { enabled: false })).status, 428);
  const patched = await admin.patch(`/api/v1/subscriptions/${id}`, { events: ['run.failed'], enabled: false }, { 'if-match': one.headers.get('etag')! });
  assert.is(patched.status, 200);
  assert.is(patched.body.version, 2);
  assert.is((await admin.patch(`/api/v1/subscriptions/${id}`, { enabled: true }, { 'if-match': one.headers.get('etag')! })).status, 412);
  const deleted = await admin.delete(`/api/v1/subscriptions/${id}`);
  assert.is(deleted.status, 200);
  assert.is(deleted.body.id, id);
  assert.is((await admin.get(`/api/v1/subscriptions/${id}`)).status, 404);
});

test('unknown event types, refused URLs and non-admins are turned away', async () => {
  const bad = await admin.post('/api/v1/subscriptions', { url: `${receiver.origin}/a`, events: ['run.exploded'] });
  assert.is(bad.status, 400);
  const http = await admin.post('/api/v1/subscriptions', { url: 'http://example.com/hook', events: ['run.completed'] });
  assert.is(http.status, 400);
  assert.is(http.body.error.details.field, 'body.url');
  assert.is((await admin.post('/api/v1/subscriptions', { url: 'https://user:pw@example.com/', events: ['run.completed'] })).status, 400);
  await addUser(db.url, seeded.organization_id, 'member@example.com', 'member-password', { [seeded.workspace_id]: 'member' });
  const member = await login(service.url, 'member@example.com', 'member-password', seeded.workspace_id);
  assert.is((await member.get('/api/v1/subscriptions')).status, 403);
  assert.is((await member.post('/api/v1/subscriptions', { url: `${receiver.origin}/a`, events: ['run.completed'] })).status, 403);
});

test('deliveries can be listed, inspected and redelivered with the same webhook-id', async () => {
  const created = await admin.post('/api/v1/subscriptions', { url: `${receiver.origin}/d`, events: ['agent.created'] });
  const { subscription, secret } = created.body;
  receiver.reply = () => ({ status: 500, body: 'nope' });
  const published = await withTransaction(service.services.pool, (tx) => publishEvent(tx, { workspace_id: seeded.workspace_id, type: 'agent.created', data: { agent_id: 'ap_1' } }));
  const id = published.delivery_ids[0]!;
  await deliverOutbox(jobs, { kinds: ['webhook'] });
  await query(db.url, `update outbox set next_attempt_at = now() where id = $1`, [id]);
  await deliverOutbox(jobs, { kinds: ['webhook'] });
  const list = await admin.get(`/api/v1/subscriptions/${subscription.id}/deliveries`);
  assert.is(list.status, 200);
  assert.equal(list.body.items.map((d: { id: string }) => d.id), [id]);
  const dead = await admin.get(`/api/v1/deliveries/${id}`);
  assert.is(dead.body.dead, true);
  assert.is(dead.body.attempts, 2);
  assert.is(dead.body.last_status_code, 500);
  assert.is(dead.body.next_attempt_at, null);
  assert.is(dead.body.event_id, published.event_id);
  receiver.reply = () => ({ status: 200 });
  const again = await admin.post(`/api/v1/deliveries/${id}/redeliver`);
  assert.is(again.status, 202);
  assert.is(again.body.state, 'pending');
  await deliverOutbox(jobs, { kinds: ['webhook'] });
  assert.is((await admin.get(`/api/v1/deliveries/${id}`)).body.state, 'delivered');
  const last = receiver.hits[receiver.hits.length - 1]!;
  assert.is(last.headers['webhook-id'], id);
  assert.ok(verifyWebhookSignature(secret, id, String(last.headers['webhook-timestamp']), last.body, String(last.headers['webhook-signature'])));
  assert.ok(receiver.hits.every((h) => h.headers['webhook-id'] === id));
  assert.is((await admin.get('/api/v1/deliveries/dlv_nope')).status, 404);
});

test.run();
