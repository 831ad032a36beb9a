import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { login, seedOrganization, type Client } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('api/conventions/if-match');
let db: TestDatabase;
let service: TestService;
let admin: Client;
let workspaceId: string;

test.before(async () => {
  db = await createTestDatabase('ifmatch');
  service = await startTestService({ databaseUrl: db.url });
  const seeded = await seedOrganization(db.url);
  workspaceId = seeded.workspace_id;
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, workspaceId);
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test('reads return a quoted ETag "<id>:<version>"', async () => {
  const read = await admin.get(`/api/v1/workspaces/${workspaceId}`);
  assert.is(read.headers.get('etag'), `"${workspaceId}:1"`);
});

test('a missing resource is 404 before any precondition', async () => {
  const r = await admin.patch('/api/v1/workspaces/ws_missing', { name: 'x' });
  assert.is(r.status, 404);
});

test('missing If-Match is 428, a stale or foreign one 412, the current one applies and bumps the version', async () => {
  const missing = await admin.patch(`/api/v1/workspaces/${workspaceId}`, { name: 'Renamed' });
  assert.is(missing.status, 428);
  assert.is(missing.body.error.code, 'precondition_required');
  const stale = await admin.patch(`/api/v1/workspaces/${workspaceId}`, { name: 'Renamed' }, { 'if-match': `"${workspaceId}:0"` });
  assert.is(stale.status, 412);
  assert.is(stale.body.error.code, 'precondition_failed');
  const foreign = await admin.patch(`/api/v1/workspaces/${workspaceId}`, { name: 'Renamed' }, { 'if-match': '"ws_other:1"' });
  assert.is(foreign.status, 412);
  const ok = await admin.patch(`/api/v1/workspaces/${workspaceId}`, { name: 'Renamed' }, { 'if-match': `"${workspaceId}:1"` });
  assert.is(ok.status, 200);
  assert.is(ok.body.version, 2);
  assert.is(ok.headers.get('etag'), `"${workspaceId}:2"`);
  const reused = await admin.patch(`/api/v1/workspaces/${workspaceId}`, { name: 'Again' }, { 'if-match': `"${workspaceId}:1"` });
  assert.is(reused.status, 412);
});

test('an update that changes nothing keeps the version and records no audit entry', async () => {
  const before = await query<{ n: number }>(db.url, `select count(*)::int as n from audit_events where resource_id = $1`, [workspaceId]);
  const same = await admin.patch(`/api/v1/workspaces/${workspaceId}`, { name: 'Renamed' }, { 'if-match': `"${workspaceId}:2"` });
  assert.is(same.status, 200);
  assert.is(same.body.version, 2);
  const after = await query<{ n: number }>(db.url, `select count(*)::int as n from audit_events where resource_id = $1`, [workspaceId]);
  assert.equal(after, before);
  const audit = await admin.get(`/api/v1/audit-events?resource_type=workspace&resource_id=${workspaceId}`);
  assert.ok(audit.body.items.some((e: { action: string }) => e.action === 'workspace.updated'));
});

test.run();
