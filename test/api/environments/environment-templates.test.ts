// Environment templates and environments through the API (TOOLS.md "Environments"): template
// CRUD with labels, filters and If-Match, config checked against the type's environment_schema,
// provider kind and workspace checks, types this build cannot run refused; environments of the
// `local` type created, listed and deleted (twice), refused when the template or provider is
// disabled, and refused with the reason when bubblewrap is missing.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { login, seedOrganization, type Client } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('api/environments/environment-templates');
let db: TestDatabase;
let service: TestService;
let client: Client;
let other: Client;
let localProvider: string;

const etag = (r: { headers: Headers }) => ({ 'if-match': r.headers.get('etag') ?? '' });

async function template(body: Record<string, unknown>, as = client) {
  return as.post('/api/v1/environment-templates', { name: 'box', provider_id: localProvider, ...body });
}

test.before(async () => {
  db = await createTestDatabase('env_templates');
  service = await startTestService({ databaseUrl: db.url, env: { SVC_ENVIRONMENTS__ENABLE_LOCAL: 'true' } });
  const seeded = await seedOrganization(db.url);
  client = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  const created = await client.post('/api/v1/workspaces', { name: 'Other' });
  other = client.with({ 'x-workspace-id': created.body.id });
  const provider = await client.post('/api/v1/environment-providers', { type: 'local', name: 'dev box' });
  assert.is(provider.status, 201, JSON.stringify(provider.body));
  localProvider = provider.body.id;
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test('a template is created, read, listed with label, q and archived filters, and changed with If-Match', async () => {
  const created = await template({ name: 'Python box', description: 'for scripts', labels: { team: 'data', tier: 'dev' }, config: { env: { MODE: 'test' }, workdir: '/workspace/src' }, idle_stop_seconds: 60 });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.match(created.body.id, /^envt_/);
  assert.is(created.body.idle_stop_seconds, 60);
  assert.is(created.body.idle_delete_seconds, 86400);
  assert.is(created.body.enabled, true);
  assert.is(created.headers.get('etag'), `"${created.body.id}:1"`);
  const id = created.body.id;
  await template({ name: 'Other box', labels: { team: 'web' } });

  const byLabel = await client.get('/api/v1/environment-templates?label=team:data&label=tier:dev');
  assert.equal(byLabel.body.items.map((t: { id: string }) => t.id), [id]);
  const byQ = await client.get('/api/v1/environment-templates?q=SCRIPTS');
  assert.equal(byQ.body.items.map((t: { id: string }) => t.id), [id]);
  assert.is((await client.get(`/api/v1/environment-templates?${Array.from({ length: 9 }, (_, i) => `label=k${i}:v`).join('&')}`)).status, 400, 'at most eight selectors');

  const stale = await client.patch(`/api/v1/environment-templates/${id}`, { enabled: false }, { 'if-match': `"${id}:0"` });
  assert.is(stale.status, 412);
  assert.is((await client.patch(`/api/v1/environment-templates/${id}`, { enabled: false })).status, 428);
  const same = await client.patch(`/api/v1/environment-templates/${id}`, { name: 'Python box' }, etag(created));
  assert.is(same.status, 200);
  assert.is(same.body.version, 1, 'a PATCH that changes nothing keeps the version');
  const disabled = await client.patch(`/api/v1/environment-templates/${id}`, { enabled: false, labels: { team: 'data' } }, etag(created));
  assert.is(disabled.status, 200, JSON.stringify(disabled.body));
  assert.is(disabled.body.version, 2);
  assert.equal(disabled.body.labels, { team: 'data' });
  const archived = await client.get('/api/v1/environment-templates?archived=true');
  assert.equal(archived.body.items.map((t: { id: string }) => t.id), [id], 'archived=true lists disabled templates');
  const active = await client.get('/api/v1/environment-templates?archived=false');
  assert.not.ok(active.body.items.some((t: { id: string }) => t.id === id));
  assert.is((await other.get(`/api/v1/environment-templates/${id}`)).status, 404, 'another workspace sees nothing');
  const audit = await query<{ action: string }>(db.url, `select action from audit_events where resource_id = $1 order by created_at`, [id]);
  assert.equal(audit.map((a) => a.action), ['environment_template.created', 'environment_template.updated']);
});

test('config must match the type\'s environment_schema; 400 names the field', async () => {
  const unknownKey = await template({ config: { image: 'node:20' } });
  assert.is(unknownKey.status, 400);
  assert.is(unknownKey.body.error.details.field, 'body.config.image');
  const badEnv = await template({ config: { env: { 'NOT VALID': 'x' } } });
  assert.is(badEnv.status, 400);
  assert.match(badEnv.body.error.details.field, /^body\.config\.env/);
  const escape = await template({ config: { workdir: '/workspace/../etc' } });
  assert.is(escape.status, 400);
  assert.is(escape.body.error.details.field, 'body.config.workdir');
  const order = await template({ idle_stop_seconds: 600, idle_delete_seconds: 60 });
  assert.is(order.status, 400);
  assert.is(order.body.error.details.field, 'body.idle_delete_seconds');
  const created = await template({});
  const patched = await client.patch(`/api/v1/environment-templates/${created.body.id}`, { config: { workdir: 'relative' } }, etag(created));
  assert.is(patched.status, 400);
  assert.is(patched.body.error.details.field, 'body.config.workdir');
});

test('the provider must be an environment provider of this workspace, of a type this build runs', async () => {
  const model = await client.post('/api/v1/model-providers', { type: 'openai', name: 'm', credential: { api_key: 'k' } });
  const wrongKind = await template({ provider_id: model.body.id });
  assert.is(wrongKind.status, 400);
  assert.is(wrongKind.body.error.details.field, 'body.provider_id');
  assert.match(wrongKind.body.error.message, /model provider, not an environment provider/);
  const foreign = await other.post('/api/v1/environment-providers', { type: 'local', name: 'theirs' });
  const foreignTemplate = await template({ provider_id: foreign.body.id });
  assert.is(foreignTemplate.status, 404);
  assert.is(foreignTemplate.body.error.details.field, 'body.provider_id');
  assert.is((await template({ provider_id: 'prv_missing' })).status, 404);
});

test('environments of the local type: created ready, listed, deleted at the vendor, deleted twice answers the deleted view', async () => {
  const tpl = await template({ name: 'deletable', config: { workdir: '/workspace/app' } });
  const created = await client.post('/api/v1/environments', { template_id: tpl.body.id, labels: { purpose: 'test' } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const env = created.body;
  assert.match(env.id, /^env_/);
  assert.is(env.status, 'ready');
  assert.is(env.type, 'local');
  assert.is(env.working_directory, '/workspace/app');
  assert.is(env.thread_id, null);
  const directory = join(service.loaded.config.environments.local_directory, env.id);
  assert.ok(existsSync(join(directory, 'app')), 'the directory and its workdir exist on the host');

  assert.is((await client.get(`/api/v1/environments/${env.id}`)).body.status, 'ready');
  const listed = await client.get(`/api/v1/environments?template_id=${tpl.body.id}&status=ready`);
  assert.equal(listed.body.items.map((e: { id: string }) => e.id), [env.id]);
  assert.is((await other.get(`/api/v1/environments/${env.id}`)).status, 404);
  assert.is((await other.delete(`/api/v1/environments/${env.id}`)).status, 404);

  const deleted = await client.delete(`/api/v1/environments/${env.id}`);
  assert.is(deleted.status, 200, JSON.stringify(deleted.body));
  assert.is(deleted.body.status, 'deleted');
  assert.ok(deleted.body.deleted_at);
  assert.not.ok(existsSync(directory), 'destroyed at the vendor: the directory is gone');
  const again = await client.delete(`/api/v1/environments/${env.id}`);
  assert.is(again.status, 200);
  assert.equal(again.body, deleted.body, 'a repeat answers the same deleted view');
  assert.is((await client.delete('/api/v1/environments/env_missing')).status, 404);
});

test('a disabled template or provider refuses new environments with disabled; existing ones can still be deleted', async () => {
  const tpl = await template({ name: 'to disable' });
  const existing = await client.post('/api/v1/environments', { template_id: tpl.body.id });
  assert.is(existing.body.status, 'ready');
  const off = await client.patch(`/api/v1/environment-templates/${tpl.body.id}`, { enabled: false }, etag(tpl));
  const refused = await client.post('/api/v1/environments', { template_id: tpl.body.id });
  assert.is(refused.status, 409);
  assert.is(refused.body.error.code, 'disabled');
  await client.patch(`/api/v1/environment-templates/${tpl.body.id}`, { enabled: true }, etag(off));

  const provider = await client.post('/api/v1/environment-providers', { type: 'local', name: 'switchable' });
  const onProvider = await template({ name: 'on provider', provider_id: provider.body.id });
  const env = await client.post('/api/v1/environments', { template_id: onProvider.body.id });
  assert.is(env.body.status, 'ready');
  await client.patch(`/api/v1/environment-providers/${provider.body.id}`, { enabled: false }, etag(provider));
  const refusedByProvider = await client.post('/api/v1/environments', { template_id: onProvider.body.id });
  assert.is(refusedByProvider.status, 409);
  assert.is(refusedByProvider.body.error.code, 'disabled');
  const deleted = await client.delete(`/api/v1/environments/${env.body.id}`);
  assert.is(deleted.body.status, 'deleted', 'environments of a disabled provider are still maintained');
  assert.is((await client.post('/api/v1/environments', { template_id: 'envt_missing' })).status, 404);
});

test('without bubblewrap the local type refuses to create environments and says why', async () => {
  const second = await startTestService({ databaseUrl: db.url, env: { SVC_ENVIRONMENTS__ENABLE_LOCAL: 'true', SVC_ENVIRONMENTS__LOCAL_BWRAP: '/nonexistent/bwrap' } });
  try {
    const tpl = await template({ name: 'no sandbox' });
    const refused = await new (client.constructor as typeof Client)(second.url, client.headers).post('/api/v1/environments', { template_id: tpl.body.id });
    assert.is(refused.status, 409, JSON.stringify(refused.body));
    assert.is(refused.body.error.code, 'conflict');
    assert.is(refused.body.error.details.reason, 'type_unavailable');
    assert.match(refused.body.error.message, /bubblewrap is not installed on this host \(\/nonexistent\/bwrap not found\); install the Debian package bubblewrap/);
  } finally {
    await second.stop();
  }
});

test('a hosted type is checked against its own schema: modal and e2b', async () => {
  const modal = await client.post('/api/v1/environment-providers', { type: 'modal', name: 'm', credential: { token_id: 'ak-1', token_secret: 'as-1' } });
  assert.is(modal.status, 201, JSON.stringify(modal.body));
  const noImage = await template({ provider_id: modal.body.id, config: {} });
  assert.is(noImage.status, 400);
  assert.is(noImage.body.error.details.field, 'body.config.image');
  const badGpu = await template({ provider_id: modal.body.id, config: { image: 'python:3.12', gpu: 'A100:99' } });
  assert.is(badGpu.status, 400);
  assert.is(badGpu.body.error.details.field, 'body.config.gpu');
  const shortLife = await template({ provider_id: modal.body.id, config: { image: 'python:3.12', timeout_seconds: 5 } });
  assert.is(shortLife.body.error.details.field, 'body.config.timeout_seconds');
  const modalOk = await template({ provider_id: modal.body.id, config: { image: 'python:3.12', gpu: 'T4', cpu: 1, memory_mb: 1024, network: { enabled: false } } });
  assert.is(modalOk.status, 201, JSON.stringify(modalOk.body));
  const e2b = await client.post('/api/v1/environment-providers', { type: 'e2b', name: 'e', credential: { api_key: 'e2b_x' } });
  const bad = await template({ provider_id: e2b.body.id, config: { timeout_seconds: 5 } });
  assert.is(bad.status, 400);
  assert.is(bad.body.error.details.field, 'body.config.timeout_seconds');
  const ok = await template({ provider_id: e2b.body.id, config: { template: 'python', timeout_seconds: 600 } });
  assert.is(ok.status, 201, JSON.stringify(ok.body));
});

test('types this build cannot run, and local where it is not enabled, are refused for templates', async () => {
  const third = await startTestService({ databaseUrl: db.url });
  try {
    const disabledLocal = await new (client.constructor as typeof Client)(third.url, client.headers).post('/api/v1/environment-templates', { name: 'x', provider_id: localProvider });
    assert.is(disabledLocal.status, 400);
    assert.match(disabledLocal.body.error.message, /type local is not installed .*enable_local/);
  } finally {
    await third.stop();
  }
});

test.run();
