import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AppError } from '../../../runtime/index.js';
import { createProviderRegistry, resolveModelForRun, type ProviderRegistry } from '../../../runtime/providers/index.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { login, seedOrganization, type Client } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';

// resolveModelForRun: what the run engine calls before a model request. Rows are written
// through the API (so credentials are sealed the real way) and resolved straight from the
// database with the service's key ring.
const test = suite('runtime/providers/resolve-model');
const KEY = 'sk-resolve-canary-9a8b7c6d';
let db: TestDatabase;
let service: TestService;
let admin: Client;
let workspaceId: string;
let registry: ProviderRegistry;

const resolve = (key: string, ws = workspaceId) => resolveModelForRun(service.services.pool, service.services.keyring, registry, ws, key);

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

async function provider(body: Record<string, unknown>): Promise<string> {
  const r = await admin.post('/api/v1/model-providers', body);
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.id as string;
}

async function model(body: Record<string, unknown>): Promise<void> {
  const r = await admin.post('/api/v1/models', body);
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
}

test.before(async () => {
  db = await createTestDatabase('resolve');
  service = await startTestService({ databaseUrl: db.url });
  const seeded = await seedOrganization(db.url);
  workspaceId = seeded.workspace_id;
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, workspaceId);
  registry = createProviderRegistry({ enableLocalEnvironment: false });
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test('resolves the model, its provider, API, base URL and the decrypted key and headers', async () => {
  const id = await provider({ type: 'openai', name: 'o', config: { organization: 'org-1' }, credential: { api_key: KEY, headers: { 'X-Extra': 'x' } } });
  await model({ key: 'gpt', provider_id: id, model: 'gpt-4o', api: 'openai-chat' });
  const resolved = await resolve('gpt');
  assert.is(resolved.model.key, 'gpt');
  assert.is(resolved.model.model, 'gpt-4o');
  assert.is(resolved.provider.id, id);
  assert.not.ok('credential' in resolved.provider);
  assert.is(resolved.api, 'openai-chat');
  assert.is(resolved.base_url, 'https://api.openai.com/v1');
  assert.is(resolved.api_key, KEY);
  assert.equal(resolved.headers, { 'OpenAI-Organization': 'org-1', 'X-Extra': 'x' });
  assert.is(resolved.aws, undefined);
});

test('API paths and config placeholders shape the base URL; Bedrock access keys come back as aws', async () => {
  const ollama = await provider({ type: 'ollama', name: 'l', config: { base_url: 'https://ollama.example.com' } });
  await model({ key: 'llama', provider_id: ollama, model: 'llama3.2' });
  const local = await resolve('llama');
  assert.is(local.base_url, 'https://ollama.example.com/v1');
  assert.is(local.api_key, undefined);
  const bedrock = await provider({ type: 'bedrock', name: 'b', config: { region: 'eu-west-1' }, credential: { access_key_id: 'AKIAEXAMPLEEXAMPLE', secret_access_key: 'secret-access-key-1' } });
  await model({ key: 'claude', provider_id: bedrock, model: 'anthropic.claude-3-haiku' });
  const aws = await resolve('claude');
  assert.is(aws.base_url, 'https://bedrock-runtime.eu-west-1.amazonaws.com');
  assert.equal(aws.aws, { region: 'eu-west-1', access_key_id: 'AKIAEXAMPLEEXAMPLE', secret_access_key: 'secret-access-key-1' });
});

test('a missing model, or one of another workspace, is not_found', async () => {
  const missing = await refusal(resolve('nope'));
  assert.is(missing.code, 'not_found');
  const other = await admin.post('/api/v1/workspaces', { name: 'Other' });
  assert.is((await refusal(resolve('gpt', other.body.id))).code, 'not_found');
});

test('a disabled model or a disabled provider is refused with disabled, at once', async () => {
  const id = await provider({ type: 'anthropic', name: 'a', credential: { api_key: KEY } });
  await model({ key: 'sonnet', provider_id: id, model: 'claude-sonnet-4-5' });
  assert.is((await resolve('sonnet')).api, 'anthropic-messages');
  let read = await admin.get('/api/v1/models/sonnet');
  await admin.patch('/api/v1/models/sonnet', { enabled: false }, { 'if-match': read.headers.get('etag')! });
  const modelOff = await refusal(resolve('sonnet'));
  assert.is(modelOff.code, 'disabled');
  assert.is(modelOff.status, 409);
  read = await admin.get('/api/v1/models/sonnet');
  await admin.patch('/api/v1/models/sonnet', { enabled: true }, { 'if-match': read.headers.get('etag')! });
  const p = await admin.get(`/api/v1/model-providers/${id}`);
  await admin.patch(`/api/v1/model-providers/${id}`, { enabled: false }, { 'if-match': p.headers.get('etag')! });
  const providerOff = await refusal(resolve('sonnet'));
  assert.is(providerOff.code, 'disabled');
  assert.not.ok(providerOff.message.includes(KEY));
});

test('a credential token moved to another provider does not decrypt there', async () => {
  const a = await provider({ type: 'openai', name: 'a', credential: { api_key: KEY } });
  const b = await provider({ type: 'openai', name: 'b', credential: { api_key: 'sk-other-0000' } });
  await model({ key: 'moved', provider_id: b, model: 'gpt-4o' });
  await query(db.url, 'update providers set credential = (select credential from providers where id = $1) where id = $2', [a, b]);
  const error = await refusal(resolve('moved'));
  assert.is(error.code, 'internal');
  assert.not.ok(error.message.includes(KEY));
});

test.run();
