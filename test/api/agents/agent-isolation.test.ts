import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent, createSkill, startAgentWorld, type AgentWorld } from './agent-test-support.js';

const test = suite('api/agents/agent-isolation');
let world: AgentWorld;

test.before(async () => {
  world = await startAgentWorld('agent_isolation');
});
test.after(async () => {
  await world?.stop();
});

test('another workspace\'s agent and its revisions answer 404 on every route', async () => {
  const { agent, match } = await createAgent(world.client, {});
  const base = `/api/v1/agents/${agent.id}`;
  const { other } = world;
  const statuses = [
    (await other.get(base)).status,
    (await other.patch(base, { name: 'x' }, match)).status,
    (await other.get(`${base}/revisions`)).status,
    (await other.get(`${base}/revisions/${agent.default_revision_id}`)).status,
    (await other.post(`${base}/revisions`, { config: { model: 'gpt-test' } }, match)).status,
    (await other.post(`${base}/duplicate`, { name: 'x' })).status,
    (await other.post(`${base}/archive`, undefined, match)).status,
    (await other.post(`${base}/unarchive`, undefined, match)).status,
    (await other.get(`${base}/avatar`)).status,
  ];
  assert.equal(statuses, Array(statuses.length).fill(404));
  const listed = await other.get('/api/v1/agents');
  assert.not.ok(listed.body.items.some((a: any) => a.id === agent.id));
  // a revision of another agent under this agent's path is 404 too
  const second = await createAgent(world.client, {});
  assert.is((await world.client.get(`${base}/revisions/${second.agent.default_revision_id}`)).status, 404);
  const head = await world.client.get(base);
  assert.is(head.body.version, 1, 'nothing changed');
});

test('another workspace\'s skill, revisions and files answer 404', async () => {
  const { skill, match } = await createSkill(world.client);
  const base = `/api/v1/skills/${skill.id}`;
  const { other } = world;
  const statuses = [
    (await other.get(base)).status,
    (await other.patch(base, { name: 'x' }, match)).status,
    (await other.get(`${base}/revisions`)).status,
    (await other.get(`${base}/revisions/${skill.default_revision_id}`)).status,
    (await other.get(`${base}/revisions/${skill.default_revision_id}/files`)).status,
    (await other.get(`${base}/revisions/${skill.default_revision_id}/files/SKILL.md`)).status,
    (await other.post(`${base}/revisions`, { files: { 'SKILL.md': 'x' } }, match)).status,
    (await other.post(`${base}/archive`, undefined, match)).status,
  ];
  assert.equal(statuses, Array(statuses.length).fill(404));
});

test.run();
