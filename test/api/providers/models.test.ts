import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { login, seedOrganization, type Client } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';

// /api/v1/models: keyed by key (no id), ETag "<key>:<version>", provider of the same
// workspace, API spoken by the provider type, settings per API, no DELETE.
const test = suite('api/providers/models');
let db: TestDatabase;
let service: TestService;
let admin: Client;
let providerId: string;
let anthropicId: string;

test.before(async () => {
  db = await createTestDatabase('models');
  service = await startTestService({ databaseUrl: db.url });
  const seeded = await seedOrganization(db.url);
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  providerId = (await admin.post('/api/v1/model-providers', { type: 'openai', name: 'OpenAI', credential: { api_key: 'sk-models-test-key' } })).body.id;
  anthropicId = (await admin.post('/api/v1/model-providers', { type: 'anthropic', name: 'Anthropic', credential: { api_key: 'sk-models-test-key' } })).body.id;
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test('create returns 201, the view has no id, the ETag is "<key>:1" and api defaults to the type default', async () => {
  const r = await admin.post('/api/v1/models', { key: 'gpt-4o', provider_id: providerId, model: 'gpt-4o', characteristics: { context_window_tokens: 128000 }, settings: { temperature: 0.2 } });
  assert.is(r.status, 201, JSON.stringify(r.body));
  assert.is(r.headers.get('etag'), '"gpt-4o:1"');
  assert.is(r.body.key, 'gpt-4o');
  assert.not.ok('id' in r.body);
  assert.is(r.body.api, 'openai-responses');
  assert.is(r.body.display_name, 'gpt-4o');
  assert.is(r.body.enabled, true);
  assert.is(r.body.version, 1);
  const one = await admin.get('/api/v1/models/gpt-4o');
  assert.is(one.status, 200);
  assert.is(one.headers.get('etag'), '"gpt-4o:1"');
  assert.equal(one.body.settings, { temperature: 0.2 });
});

test('keys must match ^[a-z0-9][a-z0-9.-]{0,127}$', async () => {
  for (const key of ['', 'Upper', '-lead', '.lead', 'has space', 'under_score', 'a'.repeat(129)]) {
    const r = await admin.post('/api/v1/models', { key, provider_id: providerId, model: 'm' });
    assert.is(r.status, 400, key);
    assert.is(r.body.error.code, 'invalid_argument');
  }
  for (const key of ['a', '0', 'claude-3.5-sonnet', 'a'.repeat(128)]) {
    const r = await admin.post('/api/v1/models', { key, provider_id: providerId, model: 'm' });
    assert.is(r.status, 201, key);
  }
});

test('a duplicate key is 409 conflict', async () => {
  const r = await admin.post('/api/v1/models', { key: 'gpt-4o', provider_id: providerId, model: 'other' });
  assert.is(r.status, 409);
  assert.is(r.body.error.code, 'conflict');
});

test('provider_id of another workspace, a missing one or a non-model provider is 404', async () => {
  const other = await admin.post('/api/v1/workspaces', { name: 'Other' });
  const foreign = admin.with({ 'x-workspace-id': other.body.id });
  const r = await foreign.post('/api/v1/models', { key: 'stolen', provider_id: providerId, model: 'gpt-4o' });
  assert.is(r.status, 404);
  assert.is(r.body.error.code, 'not_found');
  assert.is((await admin.post('/api/v1/models', { key: 'missing', provider_id: 'prv_missing', model: 'x' })).status, 404);
  const web = await admin.post('/api/v1/web-providers', { type: 'tavily', name: 't', credential: { api_key: 'tvly-key-1234' } });
  assert.is((await admin.post('/api/v1/models', { key: 'web', provider_id: web.body.id, model: 'x' })).status, 404);
  assert.is((await foreign.get('/api/v1/models/gpt-4o')).status, 404);
});

test('api must be one the provider type speaks; settings must fit the API', async () => {
  const wrongApi = await admin.post('/api/v1/models', { key: 'wrong-api', provider_id: providerId, model: 'gpt-4o', api: 'anthropic-messages' });
  assert.is(wrongApi.status, 400);
  assert.is(wrongApi.body.error.details.field, 'body.api');
  const chat = await admin.post('/api/v1/models', { key: 'chat', provider_id: providerId, model: 'gpt-4o', api: 'openai-chat' });
  assert.is(chat.body.api, 'openai-chat');
  const badSettings = await admin.post('/api/v1/models', { key: 'bad-settings', provider_id: providerId, model: 'gpt-4o', settings: { temperature: 5 } });
  assert.is(badSettings.status, 400);
  assert.match(badSettings.body.error.message, /settings/);
});

test('PATCH needs If-Match (428), refuses a stale one (412), bumps the version only on change, and keeps the key', async () => {
  const missing = await admin.patch('/api/v1/models/gpt-4o', { display_name: 'GPT-4o' });
  assert.is(missing.status, 428);
  const stale = await admin.patch('/api/v1/models/gpt-4o', { display_name: 'GPT-4o' }, { 'if-match': '"gpt-4o:7"' });
  assert.is(stale.status, 412);
  const ok = await admin.patch('/api/v1/models/gpt-4o', { display_name: 'GPT-4o', enabled: false }, { 'if-match': '"gpt-4o:1"' });
  assert.is(ok.status, 200);
  assert.is(ok.body.version, 2);
  assert.is(ok.body.enabled, false);
  assert.is(ok.headers.get('etag'), '"gpt-4o:2"');
  const same = await admin.patch('/api/v1/models/gpt-4o', { display_name: 'GPT-4o' }, { 'if-match': '"gpt-4o:2"' });
  assert.is(same.body.version, 2);
  const rekey = await admin.patch('/api/v1/models/gpt-4o', { key: 'renamed' }, { 'if-match': '"gpt-4o:2"' });
  assert.is(rekey.status, 400);
  const audit = await query<{ action: string }>(db.url, `select action from audit_events where resource_type = 'model' and resource_id = 'gpt-4o' order by id`);
  assert.equal(audit.map((a) => a.action), ['model.created', 'model.updated']);
});

test('PATCH moving a model to another provider takes that type\'s API when the current one is not spoken', async () => {
  const r = await admin.patch('/api/v1/models/chat', { provider_id: anthropicId, model: 'claude-sonnet-4-5' }, { 'if-match': '"chat:1"' });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.api, 'anthropic-messages');
  assert.is(r.body.provider_id, anthropicId);
  const wrong = await admin.patch('/api/v1/models/chat', { api: 'openai-chat' }, { 'if-match': '"chat:2"' });
  assert.is(wrong.status, 400);
});

test('lists page by key with a cursor; DELETE is 405', async () => {
  const first = await admin.get('/api/v1/models?limit=2');
  assert.is(first.status, 200);
  assert.is(first.body.items.length, 2);
  const keys = first.body.items.map((m: { key: string }) => m.key);
  assert.equal(keys, [...keys].sort());
  const next = await admin.get(`/api/v1/models?limit=100&cursor=${first.body.next_cursor}`);
  assert.ok(next.body.items.every((m: { key: string }) => m.key > keys[1]));
  assert.is(next.body.next_cursor, null);
  const del = await admin.delete('/api/v1/models/gpt-4o');
  assert.is(del.status, 405);
  assert.is(del.body.error.code, 'method_not_allowed');
});

test.run();
