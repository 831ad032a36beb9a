import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent, ifMatch, startAgentWorld, type AgentWorld } from './agent-test-support.js';

const test = suite('api/agents/agent-avatar');
let world: AgentWorld;

// a real 1×1 PNG
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(20, 1)]);

test.before(async () => {
  world = await startAgentWorld('agent_avatar');
});
test.after(async () => {
  await world?.stop();
});

async function put(agentId: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${world.service.url}/api/v1/agents/${agentId}/avatar`, { method: 'PUT', headers: { ...world.client.headers, ...headers }, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

test('an avatar round-trips byte for byte, served with the type sniffed from its bytes', async () => {
  const { agent, match } = await createAgent(world.client, {});
  // the header claims JPEG; the bytes are PNG, and PNG is what is stored and served
  const response = await put(agent.id, PNG, { 'content-type': 'image/jpeg', ...match });
  assert.is(response.status, 200, JSON.stringify(response.body));
  assert.is(response.body.version, 2);
  assert.match(response.body.image_url, new RegExp(`^/api/v1/agents/${agent.id}/avatar\\?v=[0-9a-f]{16}$`));
  const served = await fetch(`${world.service.url}${response.body.image_url}`, { headers: world.client.headers });
  assert.is(served.status, 200);
  assert.is(served.headers.get('content-type'), 'image/png');
  assert.ok(Buffer.from(await served.arrayBuffer()).equals(PNG));
  // the same image again changes nothing; another one changes the URL
  const same = await put(agent.id, PNG, { 'content-type': 'image/png', ...ifMatch(response) });
  assert.is(same.body.version, 2);
  const gif = await put(agent.id, GIF, { 'content-type': 'image/gif', ...ifMatch(same) });
  assert.is(gif.status, 200);
  assert.is.not(gif.body.image_url, response.body.image_url);
  const servedGif = await fetch(`${world.service.url}/api/v1/agents/${agent.id}/avatar`, { headers: world.client.headers });
  assert.is(servedGif.headers.get('content-type'), 'image/gif');
});

test('a body that is not a JPEG, PNG, WebP or GIF image is 415, whatever its Content-Type says', async () => {
  const { agent, match } = await createAgent(world.client, {});
  const text = await put(agent.id, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), { 'content-type': 'image/png', ...match });
  assert.is(text.status, 415);
  assert.is(text.body.error.code, 'unsupported_media_type');
  const head = await world.client.get(`/api/v1/agents/${agent.id}`);
  assert.is(head.body.version, 1);
  assert.is(head.body.image_url, '');
  assert.is((await world.client.get(`/api/v1/agents/${agent.id}/avatar`)).status, 404);
});

test('an avatar over 2 MiB is 413; a missing If-Match is 428', async () => {
  const { agent, match } = await createAgent(world.client, {});
  const big = Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024)]);
  const tooBig = await put(agent.id, big, { 'content-type': 'image/png', ...match });
  assert.is(tooBig.status, 413);
  assert.is((await put(agent.id, PNG, { 'content-type': 'image/png' })).status, 428);
});

test.run();
