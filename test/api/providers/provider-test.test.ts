import type { ServerResponse } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { apiKeyClient, login, seedOrganization, type Client } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';
import { json, vendor, type Seen } from '../../runtime/providers/fake-vendor.js';

// POST /{kind}-providers/{id}/test against local stand-ins that speak each vendor's wire
// format (OpenAI listing, Docker /_ping, MCP initialize, Mem0 listing) and the machine's
// PostgreSQL for the self-hosted memory type.
const test = suite('api/providers/provider-test');
const KEY = 'sk-probe-canary-4c1d9e2f7a3b';
let db: TestDatabase;
let service: TestService;
let admin: Client;
let fake: Awaited<ReturnType<typeof vendor>>;
const bodies: string[] = [];

function sse(res: ServerResponse, id: unknown) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(': keep-alive\n\n');
  res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'fake', version: '1' } } })}\n\n`);
  // The stream stays open, as a real server's may: the probe must stop reading on its own.
}

function route(req: Seen, res: ServerResponse): void {
  const bearer = req.headers.authorization === `Bearer ${KEY}`;
  const rpcId = req.body ? (JSON.parse(req.body) as { id?: unknown }).id : undefined;
  if (req.path === '/good/v1/models') return bearer ? json(res, 200, { object: 'list', data: [{ id: 'gpt-4o', object: 'model' }] }) : json(res, 401, { error: { message: `bad key ${req.headers.authorization}` } });
  if (req.path === '/down/v1/models') return json(res, 503, { error: { message: 'overloaded' } });
  if (req.path === '/garbage/v1/models') return void res.end('<html>not a listing</html>');
  if (req.path === '/docker/_ping') return void res.end('OK');
  if (req.path === '/not-docker/_ping') return json(res, 500, { message: 'boom' });
  if (req.path === '/mcp-json' && req.method === 'POST') return json(res, 200, { jsonrpc: '2.0', id: rpcId, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'fake', version: '1' } } });
  if (req.path === '/mcp-sse' && req.method === 'POST') return sse(res, rpcId);
  if (req.path === '/mcp-refuses') return json(res, 200, { jsonrpc: '2.0', id: rpcId, error: { code: -32600, message: 'unsupported protocol version' } });
  if (req.path === '/mcp-auth') return bearer ? json(res, 200, { jsonrpc: '2.0', id: rpcId, result: { protocolVersion: '2025-06-18' } }) : json(res, 401, {});
  if (req.path === '/mem0/v1/memories/') return req.headers.authorization === `Token ${KEY}` && req.query.get('user_id')?.startsWith('svc-provider-test-') ? json(res, 200, []) : json(res, 401, { detail: 'bad token' });
  json(res, 404, { error: 'no route' });
}

async function create(kind: string, body: unknown): Promise<string> {
  const r = await admin.post(`/api/v1/${kind}-providers`, body);
  if (r.status !== 201) throw new Error(`create ${kind}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as string;
}

async function probe(kind: string, id: string, client: Client = admin) {
  const r = await client.post(`/api/v1/${kind}-providers/${id}/test`);
  bodies.push(JSON.stringify(r.body));
  return r;
}

test.before(async () => {
  fake = await vendor(route);
  db = await createTestDatabase('prvtest');
  service = await startTestService({ databaseUrl: db.url, env: { SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([fake.base]) } });
  const seeded = await seedOrganization(db.url);
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
  await fake?.close();
});

test('model probe: the vendor listing succeeds with the stored key; a refused key fails with a message free of the key', async () => {
  const good = await create('model', { type: 'openai', name: 'ok', config: { base_url: `${fake.base}/good/v1` }, credential: { api_key: KEY } });
  assert.equal((await probe('model', good)).body, { result: 'succeeded' });
  assert.ok(fake.seen.some((s) => s.path === '/good/v1/models' && s.headers.authorization === `Bearer ${KEY}`));
  const wrong = await create('model', { type: 'openai', name: 'wrong', config: { base_url: `${fake.base}/good/v1` }, credential: { api_key: 'sk-wrong-key-000' } });
  const failed = await probe('model', wrong);
  assert.is(failed.status, 200);
  assert.is(failed.body.result, 'failed');
  assert.match(failed.body.message, /401/);
  assert.not.ok(failed.body.message.includes('sk-wrong-key-000'));
});

test('types whose descriptor says unsupported answer unsupported without a call', async () => {
  const before = fake.seen.length;
  const bedrock = await create('model', { type: 'bedrock', name: 'b', config: { region: 'us-east-1', base_url: `${fake.base}/good` }, credential: { api_key: KEY } });
  assert.equal((await probe('model', bedrock)).body, { result: 'unsupported' });
  const web = await create('web', { type: 'tavily', name: 't', credential: { api_key: KEY } });
  assert.equal((await probe('web', web)).body, { result: 'unsupported' });
  const e2b = await create('environment', { type: 'e2b', name: 'e', credential: { api_key: KEY } });
  assert.equal((await probe('environment', e2b)).body, { result: 'unsupported' });
  assert.is(fake.seen.length, before);
});

test('docker pings the engine (GET /_ping) and fails on anything else', async () => {
  const engine = await create('environment', { type: 'docker', name: 'd', config: { base_url: `${fake.base}/docker` } });
  assert.equal((await probe('environment', engine)).body, { result: 'succeeded' });
  assert.ok(fake.seen.some((s) => s.method === 'GET' && s.path === '/docker/_ping'));
  const broken = await create('environment', { type: 'docker', name: 'nd', config: { base_url: `${fake.base}/not-docker` } });
  const r = await probe('environment', broken);
  assert.is(r.body.result, 'failed');
  assert.match(r.body.message, /500/);
  const socket = await create('environment', { type: 'docker', name: 'sock', config: { socket_path: '/nonexistent/docker.sock' } });
  const s = await probe('environment', socket);
  assert.is(s.body.result, 'failed');
  assert.match(s.body.message, /ENOENT|could not reach/);
});

test('mcp sends initialize over Streamable HTTP: JSON and SSE answers succeed, JSON-RPC errors and 401 fail', async () => {
  const plain = await create('connector', { type: 'mcp', name: 'j', config: { url: `${fake.base}/mcp-json` } });
  assert.equal((await probe('connector', plain)).body, { result: 'succeeded' });
  const sent = fake.seen.find((s) => s.path === '/mcp-json')!;
  assert.is(JSON.parse(sent.body).method, 'initialize');
  assert.match(String(sent.headers.accept), /text\/event-stream/);
  const stream = await create('connector', { type: 'mcp', name: 's', config: { url: `${fake.base}/mcp-sse` } });
  assert.equal((await probe('connector', stream)).body, { result: 'succeeded' });
  const refuses = await create('connector', { type: 'mcp', name: 'r', config: { url: `${fake.base}/mcp-refuses` } });
  const r = await probe('connector', refuses);
  assert.is(r.body.result, 'failed');
  assert.match(r.body.message, /unsupported protocol version/);
  const auth = await create('connector', { type: 'mcp', name: 'a', config: { url: `${fake.base}/mcp-auth` }, credential: { api_key: KEY } });
  assert.equal((await probe('connector', auth)).body, { result: 'succeeded' });
  const noAuth = await create('connector', { type: 'mcp', name: 'na', config: { url: `${fake.base}/mcp-auth` } });
  assert.match((await probe('connector', noAuth)).body.message, /401/);
});

test('memory probes list one page of an unused namespace: mem0 with its Token auth, postgres on the configured server', async () => {
  const mem0 = await create('memory', { type: 'mem0', name: 'm', config: { base_url: `${fake.base}/mem0` }, credential: { api_key: KEY } });
  assert.equal((await probe('memory', mem0)).body, { result: 'succeeded' });
  const bad = await create('memory', { type: 'mem0', name: 'mb', config: { base_url: `${fake.base}/mem0` }, credential: { api_key: 'wrong-mem0-key' } });
  assert.is((await probe('memory', bad)).body.result, 'failed');
  // The machine's PostgreSQL with trust auth; a records table makes the probe read a page.
  await query(db.url, 'create table memory_records (namespace text not null, content text)');
  const pgProvider = await create('memory', { type: 'postgres', name: 'pg', config: { host: '127.0.0.1', port: 5432, database: db.name, user: 'postgres' } });
  assert.equal((await probe('memory', pgProvider)).body, { result: 'succeeded' });
  const nowhere = await create('memory', { type: 'postgres', name: 'pg-off', config: { host: '127.0.0.1', port: 1, database: db.name, user: 'postgres' }, credential: { password: 'pg-canary-secret' } });
  const r = await probe('memory', nowhere);
  assert.is(r.body.result, 'failed');
  assert.not.ok(r.body.message.includes('pg-canary-secret'));
});

test('a disabled provider refuses its test with 409 disabled; the test needs the run permission', async () => {
  const id = await create('model', { type: 'openai', name: 'off', config: { base_url: `${fake.base}/good/v1` }, credential: { api_key: KEY } });
  const read = await admin.get(`/api/v1/model-providers/${id}`);
  await admin.patch(`/api/v1/model-providers/${id}`, { enabled: false }, { 'if-match': read.headers.get('etag')! });
  const r = await probe('model', id);
  assert.is(r.status, 409);
  assert.is(r.body.error.code, 'disabled');
  const models = await admin.get(`/api/v1/model-providers/${id}/models`);
  assert.is(models.status, 409);
  assert.is(models.body.error.code, 'disabled');
  const { client: viewer } = await apiKeyClient(admin, 'viewer');
  assert.is((await probe('model', id, viewer)).status, 403);
});

test('discovery lists the vendor models as spec 2.12 entries', async () => {
  const id = await create('model', { type: 'openai', name: 'disc', config: { base_url: `${fake.base}/good/v1` }, credential: { api_key: KEY } });
  const r = await admin.get(`/api/v1/model-providers/${id}/models`);
  bodies.push(JSON.stringify(r.body));
  assert.is(r.status, 200);
  assert.ok(Array.isArray(r.body));
  assert.is(r.body[0].slug, 'gpt-4o');
  assert.type(r.body[0].display_name, 'string');
  assert.type(r.body[0].characteristics.context_window_tokens, 'number');
});

test('discovery failures: refused key and non-listing 409 conflict with the reason, unreachable vendor 503, no listing 409', async () => {
  const cases: Array<[string, Record<string, unknown>, number, string, string]> = [
    ['openai', { base_url: `${fake.base}/good/v1` }, 409, 'conflict', 'unauthenticated'],
    ['openai', { base_url: `${fake.base}/garbage/v1` }, 409, 'conflict', 'protocol_error'],
    ['openai', { base_url: `${fake.base}/down/v1` }, 503, 'unavailable', 'upstream_unavailable'],
    ['bedrock', { region: 'us-east-1' }, 409, 'conflict', 'unsupported'],
  ];
  for (const [type, config, status, code, reason] of cases) {
    const id = await create('model', { type, name: reason, config, credential: { api_key: 'sk-other-key-123' } });
    const r = await admin.get(`/api/v1/model-providers/${id}/models`);
    bodies.push(JSON.stringify(r.body));
    assert.is(r.status, status, reason);
    assert.is(r.body.error.code, code);
    assert.is(r.body.error.details.reason, reason);
  }
});

test('no probe or discovery answer, log line or audit entry carries a credential', async () => {
  for (const body of bodies) assert.not.ok(body.includes(KEY) || body.includes('sk-other-key-123'), body);
  for (const line of service.logs.lines) assert.not.ok(line.includes(KEY) || line.includes('pg-canary-secret'), line);
  const audit = JSON.stringify(await query(db.url, 'select * from audit_events'));
  assert.not.ok(audit.includes(KEY));
});

test.run();
