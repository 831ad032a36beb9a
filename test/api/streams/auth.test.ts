import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyClient, login, seedOrganization } from '../../support/identity.js';
import { startTestService } from '../../support/service.js';
import { SseClient, WsClient } from './stream-clients.js';
import { startStreamFixture, type StreamFixture } from './stream-fixture.js';

// Opening a stream follows the REST API's rules: a Bearer credential (for browsers' WebSocket
// also in a subprotocol, never in the query string), the thread within the workspace, the rate
// limit; credentials never reach the logs.
const test = suite('api/streams/auth');
let f: StreamFixture;

test.before(async () => {
  f = await startStreamFixture();
});

test.after(async () => {
  await f?.stop();
});

async function refusedUpgrade(url: string, options: Parameters<typeof WsClient.open>[1]): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  try {
    const client = await WsClient.open(url, options);
    client.close();
  } catch (error) {
    return error as { status: number; headers: Record<string, string>; body: string };
  }
  throw new Error('the upgrade was accepted');
}

test('no credential: 401 with WWW-Authenticate and the error body (SSE and WebSocket)', async () => {
  const sse = await SseClient.open(f.streamUrl(), {});
  await sse.waitEnded();
  assert.is(sse.status, 401);
  assert.is(sse.headers['www-authenticate'], 'Bearer');
  assert.ok(sse.headers['x-request-id']);
  assert.is(JSON.parse(sse.body).error.code, 'unauthenticated');
  const ws = await refusedUpgrade(f.wsUrl(), {});
  assert.is(ws.status, 401);
  assert.is(JSON.parse(ws.body).error.code, 'unauthenticated');
  // A token in the query string is not a credential.
  const query = await SseClient.open(f.streamUrl(f.threadId, `access_token=${f.apiKey}`), {});
  await query.waitEnded();
  assert.is(query.status, 401);
});

test("another workspace's thread is 404; a malformed resume id is 400", async () => {
  const other = await seedOrganization(f.db.url, 'other@example.com', 'other-password');
  const session = await login(f.service.url, other.admin.email, other.admin.password, other.workspace_id);
  const otherKey = (await apiKeyClient(session)).client;
  const otherSession = await otherKey.post('/api/v1/sessions', {});
  const otherThread = (await otherKey.post(`/api/v1/sessions/${otherSession.body.id}/threads`, {})).body.id as string;
  const sse = await SseClient.open(f.streamUrl(otherThread), { authorization: `Bearer ${f.apiKey}` });
  await sse.waitEnded();
  assert.is(sse.status, 404);
  assert.is(JSON.parse(sse.body).error.code, 'not_found');
  assert.is((await refusedUpgrade(f.wsUrl(otherThread), { headers: { authorization: `Bearer ${f.apiKey}` } })).status, 404);
  const missing = await SseClient.open(f.streamUrl('thr_nope'), { authorization: `Bearer ${f.apiKey}` });
  await missing.waitEnded();
  assert.is(missing.status, 404);
  const bad = await SseClient.open(f.streamUrl(f.threadId, 'after=yesterday'), { authorization: `Bearer ${f.apiKey}` });
  await bad.waitEnded();
  assert.is(bad.status, 400);
  assert.is(JSON.parse(bad.body).error.details.field, 'query.after');
});

test('a browser WebSocket authenticates with bearer.<token> (and workspace.<id>) subprotocols; the token is never logged', async () => {
  const ws = await WsClient.open(f.wsUrl(), { protocols: ['svc.json.v1', `bearer.${f.apiKey}`] });
  assert.is(ws.protocol, 'svc.json.v1', 'the answered subprotocol is the format, never the credential');
  await ws.waitFor((e) => e.type === 'stream.live');
  ws.close();
  const session = await login(f.service.url, 'admin@example.com', 'admin-password');
  const token = session.headers.authorization!.slice('Bearer '.length);
  const bySession = await WsClient.open(f.wsUrl(), { protocols: ['svc.msgpack.v1', `bearer.${token}`, `workspace.${f.workspaceId}`] });
  assert.is(bySession.protocol, 'svc.msgpack.v1');
  await bySession.waitFor((e) => e.type === 'stream.live');
  bySession.close();
  const noFormat = await refusedUpgrade(f.wsUrl(), { protocols: [`bearer.${f.apiKey}`] });
  assert.is(noFormat.status, 400);
  const wrong = await refusedUpgrade(f.wsUrl(), { protocols: ['svc.json.v1', 'bearer.svk_not_a_key'] });
  assert.is(wrong.status, 401);
  const logs = f.service.logs.lines.join('\n');
  assert.not.ok(logs.includes(f.apiKey), 'the API key is not in the logs');
  assert.not.ok(logs.includes(token), 'the session token is not in the logs');
  assert.ok(f.service.logs.records.some((r) => r.route === '/api/v1/threads/{thread_id}/stream' && r.status === 101));
});

test('the rate limit applies to opening a stream (429 + Retry-After)', async () => {
  const limited = await startTestService({ databaseUrl: f.db.url, env: { SVC_AUTH__RATE_LIMIT_PER_MINUTE: '2' } });
  try {
    const url = `${limited.url}/api/v1/threads/${f.threadId}/stream`;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const sse = await SseClient.open(url, { authorization: `Bearer ${f.apiKey}` });
      statuses.push(sse.status);
      if (sse.status === 429) assert.ok(Number(sse.headers['retry-after']) >= 1);
      sse.close();
    }
    assert.equal(statuses, [200, 200, 429]);
  } finally {
    await limited.stop();
  }
});

test.run();
