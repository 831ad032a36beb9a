import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { startAgentWorld, type AgentWorld } from '../agents/agent-test-support.js';

const test = suite('api/findings/finding-agent');
let w: AgentWorld;

test.before(async () => {
  w = await startAgentWorld('finding_agent');
});
test.after(async () => {
  await w?.stop();
});

test('creates the finding agent once (201), then returns the same head (200)', async () => {
  const first = await w.client.post('/api/v1/finding-agent');
  assert.is(first.status, 201, JSON.stringify(first.body));
  assert.ok(first.body.id.startsWith('ap_'));
  assert.is(first.body.preset_kind, 'finding_agent');
  assert.is(first.headers.get('etag'), `"${first.body.id}:1"`);
  const head = await w.client.get(`/api/v1/agents/${first.body.id}`);
  assert.equal(first.body, head.body);
  const again = await w.client.post('/api/v1/finding-agent');
  assert.is(again.status, 200);
  assert.equal(again.body, head.body);
  const revision = await w.client.get(`/api/v1/agents/${first.body.id}/revisions/${first.body.default_revision_id}`);
  assert.is(revision.status, 200, JSON.stringify(revision.body));
  const config = revision.body.config;
  assert.is(config.model, 'gpt-test');
  assert.match(config.instructions, 'traces');
  const item = config.output_spec.schema.properties.findings.items;
  assert.equal(item.required.sort(), ['category', 'evidence', 'explanation', 'severity', 'source_key', 'suggestion', 'title']);
  assert.equal(item.properties.evidence.items.required, ['run_id', 'trace_id']);
});

test('two concurrent first calls in a workspace prepare one agent', async () => {
  const [a, b] = await Promise.all([w.other.post('/api/v1/finding-agent'), w.other.post('/api/v1/finding-agent')]);
  assert.equal([a.status, b.status].sort(), [200, 201]);
  assert.is(a.body.id, b.body.id);
  const rows = await query(w.db.url, `select count(*)::int as n from agents where workspace_id = $1 and preset_kind = 'finding_agent'`, [w.otherWorkspaceId]);
  assert.is(rows[0]?.n, 1);
});

test('a workspace without an enabled model is 400 with a clear message', async () => {
  const created = await w.client.post('/api/v1/workspaces', { name: 'Empty' });
  const empty = w.client.with({ 'x-workspace-id': created.body.id });
  const none = await empty.post('/api/v1/finding-agent');
  assert.is(none.status, 400);
  assert.is(none.body.error.code, 'invalid_argument');
  assert.match(none.body.error.message, 'no enabled model');
  const providerId = `prv_disabled${Date.now()}`;
  await query(w.db.url, `insert into providers (id, workspace_id, kind, type, name) values ($1, $2, 'model', 'openai', 'test')`, [providerId, created.body.id]);
  await query(w.db.url, `insert into models (workspace_id, key, provider_id, model, api, enabled) values ($1, 'a-off', $2, 'x', 'openai-chat', false)`, [created.body.id, providerId]);
  assert.is((await empty.post('/api/v1/finding-agent')).status, 400);
  await query(w.db.url, `insert into models (workspace_id, key, provider_id, model, api) values ($1, 'b-on', $2, 'x', 'openai-chat')`, [created.body.id, providerId]);
  const prepared = await empty.post('/api/v1/finding-agent');
  assert.is(prepared.status, 201);
  const revision = await empty.get(`/api/v1/agents/${prepared.body.id}/revisions/${prepared.body.default_revision_id}`);
  assert.is(revision.body.config.model, 'b-on');
});

test('a viewer may not prepare it (write permission)', async () => {
  const key = await w.client.post('/api/v1/api-keys', { name: 'viewer', role: 'viewer' });
  const viewer = w.client.with({ authorization: `Bearer ${key.body.secret}` });
  const response = await viewer.post('/api/v1/finding-agent');
  assert.is(response.status, 403, JSON.stringify(response.body));
});

test.run();
