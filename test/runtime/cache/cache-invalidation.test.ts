import { suite } from 'uvu';
import { insertMembership, withTransaction } from '../../../runtime/index.js';
import * as assert from 'uvu/assert';
import { runCliProcess } from '../../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { addUser, apiKeyClient, Client, login, seedOrganization, type Seeded } from '../../support/identity.js';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server.js';
import { startTestService, type TestService } from '../../support/service.js';
import { seedModel } from '../../api/agents/agent-test-support.js';

// Two service instances with separate caches, sharing one database and one (private) Redis:
// what one commits, the other must stop serving from its cache within the pub/sub delay, and
// at once while Redis is lost (the cache is bypassed then).
const test = suite('runtime/cache/cache-invalidation');
let db: TestDatabase;
let redis: PrivateRedis;
let a: TestService;
let b: TestService;
let seeded: Seeded;
let adminA: Client;
let adminB: Client;
let agentId: string;
let otherWorkspaceId: string;
// Webhook deliveries are only counted (outbox rows), never sent anywhere that answers.
const HOOK_ORIGIN = 'http://127.0.0.1:9';
const prefix = `svc-test-cache-${Math.random().toString(36).slice(2)}:`;

const start = () => startTestService({ databaseUrl: db.url, kvUrl: redis.url, env: { SVC_KV__KEY_PREFIX: prefix, SVC_AUTH__RATE_LIMIT_PER_MINUTE: '0', SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([HOOK_ORIGIN]) } });

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Polls `request` until it answers `status`; returns the milliseconds that took. */
/**
 * Requests one after another from t0 (right after the change committed) until one answers
 * `status`; returns when that request was SENT, relative to t0: the change was in force for a
 * request sent that long after the commit (the previous one, sent earlier, still saw the old
 * state). The bound the tests check is the propagation's, so the request's own time on a
 * loaded machine (the answer's trip back) is not counted in it.
 */
async function msUntilStatus(status: number, request: () => Promise<{ status: number }>, timeoutMs = 2_000): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const sent = performance.now();
    if ((await request()).status === status) return sent - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`no ${status} within ${timeoutMs} ms`);
  }
}

test.before(async () => {
  db = await createTestDatabase('cache');
  redis = await startPrivateRedis();
  a = await start();
  b = await start();
  await until('both caches live', () => a.services.caches.isLive() && b.services.caches.isLive());
  seeded = await seedOrganization(db.url);
  adminA = await login(a.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  adminB = await login(b.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  await seedModel(db.url, seeded.workspace_id, 'gpt-test');
  const created = await adminA.post('/api/v1/agents', { name: 'Cached', config: { model: 'gpt-test' } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  agentId = created.body.id;
  const other = await adminA.post('/api/v1/workspaces', { name: 'Other' });
  assert.is(other.status, 201);
  otherWorkspaceId = other.body.id;
});
test.after(async () => {
  await a?.stop();
  await b?.stop();
  await redis?.stop();
  await db?.drop();
});

test('a key revoked through A is refused by B within 100 ms of the revoke response', async () => {
  const key = await apiKeyClient(adminA);
  const viaB = new Client(b.url, key.client.headers);
  // B has the key cached (two reads: the second is a hit).
  assert.is((await viaB.get(`/api/v1/agents/${agentId}`)).status, 200);
  assert.is((await viaB.get(`/api/v1/agents/${agentId}`)).status, 200);
  assert.ok(b.services.caches.size > 0, 'B serves from its cache');
  assert.is((await adminA.delete(`/api/v1/api-keys/${key.id}`)).status, 200);
  const ms = await msUntilStatus(401, () => viaB.get(`/api/v1/agents/${agentId}`));
  assert.ok(ms < 100, `refused after ${ms.toFixed(1)} ms`);
  // the writer refuses it at once
  assert.is((await key.client.get(`/api/v1/agents/${agentId}`)).status, 401);
});

test('a user disabled by the operator command is refused by B (session and key) within 100 ms', async () => {
  const userId = await addUser(db.url, seeded.organization_id, 'member@example.com', 'member-password', { [seeded.workspace_id]: 'member' });
  const session = await login(b.url, 'member@example.com', 'member-password', seeded.workspace_id);
  const key = await apiKeyClient(session);
  for (const client of [session, key.client]) {
    assert.is((await client.get(`/api/v1/agents/${agentId}`)).status, 200);
    assert.is((await client.get(`/api/v1/agents/${agentId}`)).status, 200);
  }
  const env = { SVC_DATABASE__URL: db.url, SVC_KV__URL: redis.url, SVC_KV__KEY_PREFIX: prefix };
  const disabled = await runCliProcess(['user', 'disable', '--email', 'member@example.com'], { env });
  assert.is(disabled.code, 0, disabled.stderr);
  assert.ok(disabled.stdout.includes(userId));
  const ms = await msUntilStatus(401, () => session.get(`/api/v1/agents/${agentId}`));
  assert.ok(ms < 100, `session refused after ${ms.toFixed(1)} ms`);
  assert.is((await key.client.get(`/api/v1/agents/${agentId}`)).status, 401);
  // enabling restores both, also on B
  assert.is((await runCliProcess(['user', 'enable', '--email', 'member@example.com'], { env })).code, 0);
  await msUntilStatus(200, () => key.client.get(`/api/v1/agents/${agentId}`));
  assert.is((await session.get(`/api/v1/agents/${agentId}`)).status, 200);
});

test('a session logged out through A is refused by B within 100 ms', async () => {
  const onB = await login(b.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  assert.is((await onB.get(`/api/v1/agents/${agentId}`)).status, 200);
  assert.is((await onB.get(`/api/v1/agents/${agentId}`)).status, 200);
  const onA = new Client(a.url, onB.headers);
  assert.is((await onA.post('/api/v1/auth/logout')).status, 200);
  const ms = await msUntilStatus(401, () => onB.get(`/api/v1/agents/${agentId}`));
  assert.ok(ms < 100, `refused after ${ms.toFixed(1)} ms`);
});

test("a role change committed in A reaches B's cached session and key within 100 ms", async () => {
  const userId = await addUser(db.url, seeded.organization_id, 'viewer@example.com', 'viewer-password', { [seeded.workspace_id]: 'viewer' });
  const session = await login(b.url, 'viewer@example.com', 'viewer-password', seeded.workspace_id);
  const create = () => session.post('/api/v1/sessions', {});
  assert.is((await create()).status, 403);
  assert.is((await create()).status, 403);
  // What an accepted invitation does (the only API path that changes a role), in A's process.
  await withTransaction(a.services.pool, (tx) => insertMembership(tx, { workspace_id: seeded.workspace_id, user_id: userId, role: 'member' }));
  const ms = await msUntilStatus(201, create);
  assert.ok(ms < 100, `allowed after ${ms.toFixed(1)} ms`);
});

test("an agent PATCH through A is seen by B's GET within 100 ms", async () => {
  const before = await adminB.get(`/api/v1/agents/${agentId}`);
  assert.is(before.status, 200);
  await adminB.get(`/api/v1/agents/${agentId}`);
  const patched = await adminA.patch(`/api/v1/agents/${agentId}`, { name: 'Renamed' }, { 'if-match': before.headers.get('etag') ?? '' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  const t0 = performance.now();
  let seen = await adminB.get(`/api/v1/agents/${agentId}`);
  while (seen.body.name !== 'Renamed' && performance.now() - t0 < 2_000) seen = await adminB.get(`/api/v1/agents/${agentId}`);
  const ms = performance.now() - t0;
  assert.is(seen.body.name, 'Renamed');
  assert.is(seen.headers.get('etag'), patched.headers.get('etag'));
  assert.ok(ms < 100, `seen after ${ms.toFixed(1)} ms`);
});

test("a subscription created, disabled and re-enabled through A is honoured by B's next event within 100 ms", async () => {
  const session = await adminB.post('/api/v1/sessions', {});
  assert.is(session.status, 201);
  /** Posts an input on a fresh thread through B (a run.accepted event); returns its run id. */
  const acceptOnB = async (): Promise<string> => {
    const thread = await adminB.post(`/api/v1/sessions/${session.body.id}/threads`, {});
    const posted = await adminB.post(`/api/v1/threads/${thread.body.id}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'hi' }] } }, { 'idempotency-key': `sub-${Math.random()}` });
    assert.is(posted.status, 201, JSON.stringify(posted.body));
    return posted.body.run.id as string;
  };
  const deliveriesOf = async (subscriptionId: string, runId: string): Promise<number> => {
    const rows = await withTransaction(a.services.pool, (tx) => tx.query(`select count(*)::int as n from outbox where subscription_id = $1 and event_type = 'run.accepted' and payload->>'body' like '%' || $2 || '%'`, [subscriptionId, runId]));
    return rows.rows[0].n as number;
  };
  // B's cached index of the workspace's subscriptions, and the milliseconds until B drops it.
  const indexKey = `sub:${seeded.workspace_id}`;
  const msUntilDropped = async (): Promise<number> => {
    const t0 = performance.now();
    while (b.services.caches.peek(indexKey) !== undefined && performance.now() - t0 < 2_000) await new Promise((r) => setTimeout(r, 1));
    return performance.now() - t0;
  };
  await acceptOnB(); // B now holds the workspace's subscription index: empty
  assert.equal(b.services.caches.peek(indexKey), [], 'B cached the empty index');
  const created = await adminA.post('/api/v1/subscriptions', { url: `${HOOK_ORIGIN}/hook`, events: ['run.accepted'] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.subscription.id as string;
  // The bound is the invalidation's (pub/sub delay), timed from A's answer; B's next event then
  // reads the index again and announces the run to the new subscription.
  const ms = await msUntilDropped();
  assert.ok(ms < 100, `B dropped its index ${ms.toFixed(1)} ms after the create`);
  assert.is(await deliveriesOf(id, await acceptOnB()), 1, 'B announced the run to the new subscription');
  const one = await adminA.get(`/api/v1/subscriptions/${id}`);
  const disabled = await adminA.patch(`/api/v1/subscriptions/${id}`, { enabled: false }, { 'if-match': one.headers.get('etag')! });
  assert.is(disabled.status, 200);
  const msDisabled = await msUntilDropped();
  assert.ok(msDisabled < 100, `the disable reached B within 100 ms (${msDisabled.toFixed(1)} ms)`);
  assert.is(await deliveriesOf(id, await acceptOnB()), 0, 'a disabled subscription gets nothing');
  // A write in B's own process is seen by its next event at once.
  const again = await adminB.get(`/api/v1/subscriptions/${id}`);
  assert.is((await adminB.patch(`/api/v1/subscriptions/${id}`, { enabled: true }, { 'if-match': again.headers.get('etag')! })).status, 200);
  assert.is(await deliveriesOf(id, await acceptOnB()), 1);
});

test("a cached agent stays 404 under another workspace (session and that workspace's key)", async () => {
  assert.is((await adminB.get(`/api/v1/agents/${agentId}`)).status, 200);
  const otherSession = adminB.with({ 'x-workspace-id': otherWorkspaceId });
  const missing = await otherSession.get(`/api/v1/agents/${agentId}`);
  assert.is(missing.status, 404, JSON.stringify(missing.body));
  const otherKey = await apiKeyClient(otherSession);
  assert.is((await otherKey.client.get(`/api/v1/agents/${agentId}`)).status, 404);
  // and an inbox input naming it from the other workspace is refused as a missing agent
  const sessionRow = await otherSession.post('/api/v1/sessions', {});
  const thread = await otherSession.post(`/api/v1/sessions/${sessionRow.body.id}/threads`, {});
  const input = await otherSession.post(`/api/v1/threads/${thread.body.id}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'hi' }] } }, { 'idempotency-key': 'cross-ws-1' });
  assert.is(input.status, 404, JSON.stringify(input.body));
});

test('with Redis stopped, a key revoked through A is refused by B at once (caches bypassed), and caching resumes after', async () => {
  const key = await apiKeyClient(adminA);
  const viaB = new Client(b.url, key.client.headers);
  assert.is((await viaB.get(`/api/v1/agents/${agentId}`)).status, 200);
  assert.is((await viaB.get(`/api/v1/agents/${agentId}`)).status, 200);
  await redis.stop();
  await until('B bypasses its cache', () => !b.services.caches.isLive() && !a.services.caches.isLive());
  assert.is((await adminA.delete(`/api/v1/api-keys/${key.id}`)).status, 200);
  assert.is((await viaB.get(`/api/v1/agents/${agentId}`)).status, 401);
  await redis.start();
  await until('caches live again', () => a.services.caches.isLive() && b.services.caches.isLive());
  assert.is((await viaB.get(`/api/v1/agents/${agentId}`)).status, 401);
  const fresh = await apiKeyClient(adminA);
  const freshB = new Client(b.url, fresh.client.headers);
  assert.is((await freshB.get(`/api/v1/agents/${agentId}`)).status, 200);
  assert.ok(b.services.caches.size > 0);
});

test('a process that starts while Redis is down reads the database until its subscription is confirmed', async () => {
  await redis.stop();
  await until('A and B see the loss', () => !a.services.caches.isLive() && !b.services.caches.isLive());
  const c = await start();
  try {
    assert.not.ok(c.services.caches.isLive());
    const onC = new Client(c.url, adminA.headers);
    assert.is((await onC.get(`/api/v1/agents/${agentId}`)).status, 200);
    assert.is(c.services.caches.size, 0, 'nothing is stored while bypassed');
    await redis.start();
    await until('C live', () => c.services.caches.isLive());
    assert.is((await onC.get(`/api/v1/agents/${agentId}`)).status, 200);
    assert.ok(c.services.caches.size > 0);
  } finally {
    await c.stop();
  }
  await until('A and B live again', () => a.services.caches.isLive() && b.services.caches.isLive());
});

test.run();
