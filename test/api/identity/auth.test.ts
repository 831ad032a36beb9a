import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setUserDisabled } from '../../../runtime/index.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { addUser, apiKeyClient, Client, login, seedOrganization, type Seeded } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('api/identity/auth');
let db: TestDatabase;
let service: TestService;
let seeded: Seeded;
let admin: Client;
let other: { id: string };

const expect401 = (r: { status: number; headers: Headers; body: any }) => {
  assert.is(r.status, 401, JSON.stringify(r.body));
  assert.is(r.headers.get('www-authenticate'), 'Bearer');
  assert.is(r.body.error.code, 'unauthenticated');
  assert.is(r.body.error.request_id, r.headers.get('x-request-id'));
};

test.before(async () => {
  db = await createTestDatabase('auth');
  service = await startTestService({ databaseUrl: db.url });
  seeded = await seedOrganization(db.url);
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  const created = await admin.post('/api/v1/workspaces', { name: 'Second' });
  assert.is(created.status, 201);
  other = created.body;
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test('no credential, a bad scheme, a malformed or unknown token are 401 with WWW-Authenticate', async () => {
  const anonymous = new Client(service.url);
  expect401(await anonymous.get('/api/v1/api-keys'));
  expect401(await anonymous.get('/api/v1/api-keys', { authorization: 'Basic YWRtaW46cGFzcw==' }));
  expect401(await anonymous.get('/api/v1/api-keys', { authorization: 'Bearer' }));
  expect401(await anonymous.get('/api/v1/api-keys', { authorization: 'Bearer svk_notarealkeyatall' }));
  expect401(await anonymous.get('/api/v1/api-keys', { authorization: 'Bearer svs_notarealsession' }));
});

test('login with a wrong password or unknown email is 401; a session works and logout ends it', async () => {
  const anonymous = new Client(service.url);
  expect401(await anonymous.post('/api/v1/auth/login', { email: seeded.admin.email, password: 'wrong-password' }));
  expect401(await anonymous.post('/api/v1/auth/login', { email: 'nobody@example.com', password: 'whatever-pass' }));
  const session = await login(service.url, seeded.admin.email, seeded.admin.password);
  const me = await session.get('/api/v1/me');
  assert.is(me.status, 200);
  assert.is(me.body.user.email, seeded.admin.email);
  assert.is(me.body.principal.kind, 'user');
  assert.not.ok('password_hash' in me.body.user);
  assert.is((await session.post('/api/v1/auth/logout')).status, 200);
  expect401(await session.get('/api/v1/me'));
});

test('a login session needs X-Workspace-ID on workspace routes; a non-member workspace is 404', async () => {
  const session = await login(service.url, seeded.admin.email, seeded.admin.password);
  const missing = await session.get('/api/v1/api-keys');
  assert.is(missing.status, 400);
  assert.match(missing.body.error.message, /X-Workspace-ID/);
  const outsider = await addUser(db.url, seeded.organization_id, 'outsider@example.com', 'outsider-pass', { [other.id]: 'member' });
  assert.ok(outsider);
  const outsiderSession = await login(service.url, 'outsider@example.com', 'outsider-pass', seeded.workspace_id);
  const notMember = await outsiderSession.get('/api/v1/api-keys');
  assert.is(notMember.status, 404);
  assert.is(notMember.body.error.code, 'not_found');
  const nonexistent = await outsiderSession.get('/api/v1/api-keys', { 'x-workspace-id': 'ws_doesnotexist' });
  assert.is(nonexistent.status, 404);
});

test('an API key needs no X-Workspace-ID, may name its own workspace, and naming another is 403', async () => {
  const { client } = await apiKeyClient(admin);
  assert.is((await client.get('/api/v1/api-keys')).status, 200);
  assert.is((await client.get('/api/v1/api-keys', { 'x-workspace-id': seeded.workspace_id })).status, 200);
  const forbidden = await client.get('/api/v1/api-keys', { 'x-workspace-id': other.id });
  assert.is(forbidden.status, 403);
  assert.is(forbidden.body.error.code, 'forbidden');
});

test('a revoked key stops working at once', async () => {
  const { client, id } = await apiKeyClient(admin);
  assert.is((await client.get('/api/v1/api-keys')).status, 200);
  const revoked = await admin.delete(`/api/v1/api-keys/${id}`);
  assert.is(revoked.status, 200);
  assert.ok(revoked.body.revoked_at);
  expect401(await client.get('/api/v1/api-keys'));
});

test("a disabled user's sessions and keys stop at once and work again when re-enabled", async () => {
  const userId = await addUser(db.url, seeded.organization_id, 'member@example.com', 'member-pass', { [seeded.workspace_id]: 'member' });
  const session = await login(service.url, 'member@example.com', 'member-pass', seeded.workspace_id);
  const { client: key } = await apiKeyClient(session);
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  try {
    await setUserDisabled(pool, userId, true);
    expect401(await session.get('/api/v1/api-keys'));
    expect401(await key.get('/api/v1/api-keys'));
    expect401(await new Client(service.url).post('/api/v1/auth/login', { email: 'member@example.com', password: 'member-pass' }));
    await setUserDisabled(pool, userId, false);
    assert.is((await session.get('/api/v1/api-keys')).status, 200);
    assert.is((await key.get('/api/v1/api-keys')).status, 200);
  } finally {
    await pool.end();
  }
});

test('an expired session is refused', async () => {
  const session = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  await query(db.url, `update login_sessions set expires_at = now() - interval '1 second' where user_id = $1`, [seeded.admin.id]);
  expect401(await session.get('/api/v1/api-keys'));
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
});

test("roles: a viewer key cannot write; a key's role may not exceed its creator's; only admins read the audit trail", async () => {
  const { client: viewer } = await apiKeyClient(admin, 'viewer');
  assert.is((await viewer.get('/api/v1/api-keys')).status, 200);
  const write = await viewer.post('/api/v1/workspaces', { name: 'nope' });
  assert.is(write.status, 403);
  assert.is((await viewer.get('/api/v1/audit-events')).status, 403);
  await addUser(db.url, seeded.organization_id, 'viewer@example.com', 'viewer-pass', { [seeded.workspace_id]: 'viewer' });
  const viewerSession = await login(service.url, 'viewer@example.com', 'viewer-pass', seeded.workspace_id);
  const escalate = await viewerSession.post('/api/v1/api-keys', { name: 'x', role: 'admin' });
  assert.is(escalate.status, 403);
  assert.is((await admin.get('/api/v1/audit-events')).status, 200);
});

test('only the secret hash is stored; the secret is shown once', async () => {
  const created = await admin.post('/api/v1/api-keys', { name: 'shown once' });
  const secret: string = created.body.secret;
  assert.match(secret, /^svk_[A-Za-z0-9_-]{40,}$/);
  const rows = await query<{ secret_hash: Buffer }>(db.url, 'select secret_hash from api_keys where id = $1', [created.body.api_key.id]);
  assert.is(rows[0]!.secret_hash.length, 32);
  const listed = await admin.get('/api/v1/api-keys');
  assert.not.ok(JSON.stringify(listed.body).includes(secret));
  assert.not.ok(service.logs.lines.join('\n').includes(secret));
});

test.run();
