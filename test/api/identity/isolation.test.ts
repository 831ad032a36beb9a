import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { apiKeyClient, login, seedOrganization, type Client } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('api/identity/isolation');
let db: TestDatabase;
let service: TestService;
let one: Client;
let two: Client;
let oneId: string;
let twoId: string;

test.before(async () => {
  db = await createTestDatabase('iso');
  service = await startTestService({ databaseUrl: db.url });
  const seeded = await seedOrganization(db.url);
  oneId = seeded.workspace_id;
  const session = await login(service.url, seeded.admin.email, seeded.admin.password, oneId);
  twoId = (await session.post('/api/v1/workspaces', { name: 'Two' })).body.id;
  one = (await apiKeyClient(session)).client;
  two = (await apiKeyClient(session.with({ 'x-workspace-id': twoId }))).client;
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test("a workspace's resources answer 404 by id from another workspace, exactly like missing ones", async () => {
  const key = (await one.get('/api/v1/api-keys')).body.items[0];
  const fromTwo = await two.delete(`/api/v1/api-keys/${key.id}`);
  const missing = await two.delete('/api/v1/api-keys/key_doesnotexist');
  assert.is(fromTwo.status, 404);
  assert.equal(fromTwo.body.error.code, missing.body.error.code);
  assert.equal(fromTwo.body.error.message, missing.body.error.message);
  assert.is((await one.get('/api/v1/api-keys')).body.items.some((k: { id: string }) => k.id === key.id), true, 'still active');
});

test('lists, workspaces and the audit trail show only the own workspace', async () => {
  const keysOne = (await one.get('/api/v1/api-keys')).body.items as Array<{ workspace_id: string }>;
  const keysTwo = (await two.get('/api/v1/api-keys')).body.items as Array<{ workspace_id: string }>;
  assert.ok(keysOne.every((k) => k.workspace_id === oneId));
  assert.ok(keysTwo.every((k) => k.workspace_id === twoId));
  assert.is((await two.get(`/api/v1/workspaces/${oneId}`)).status, 404);
  assert.equal(((await two.get('/api/v1/workspaces')).body.items as Array<{ id: string }>).map((w) => w.id), [twoId]);
  const audit = (await two.get('/api/v1/audit-events')).body.items as Array<{ workspace_id: string }>;
  assert.ok(audit.length > 0);
  assert.ok(audit.every((e) => e.workspace_id === twoId));
});

test.run();
