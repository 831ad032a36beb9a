import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSkill, ifMatch, startAgentWorld, type AgentWorld } from '../agents/agent-test-support.js';

const test = suite('api/skills/skill-heads');
let world: AgentWorld;

test.before(async () => {
  world = await startAgentWorld('skill_heads');
});
test.after(async () => {
  await world?.stop();
});

test('publishing numbers revisions; identical content returns the default with 201 and no change', async () => {
  const { skill, match } = await createSkill(world.client, { files: { 'SKILL.md': 'one' } });
  const same = await world.client.post(`/api/v1/skills/${skill.id}/revisions`, { files: { 'SKILL.md': 'one' }, make_default: false }, match);
  assert.is(same.status, 201);
  assert.is(same.body.id, skill.default_revision_id);
  assert.is((await world.client.get(`/api/v1/skills/${skill.id}`)).body.version, 1);
  const two = await world.client.post(`/api/v1/skills/${skill.id}/revisions`, { files: { 'SKILL.md': 'two' }, note: 'n' }, match);
  assert.is(two.status, 201);
  assert.is(two.body.number, 2);
  assert.is((await world.client.post(`/api/v1/skills/${skill.id}/revisions`, { files: { 'SKILL.md': 'three' } }, match)).status, 412);
  const list = await world.client.get(`/api/v1/skills/${skill.id}/revisions`);
  assert.equal(list.body.items.map((r: any) => r.number), [2, 1]);
  const head = await world.client.get(`/api/v1/skills/${skill.id}`);
  assert.is(head.body.default_revision_id, two.body.id);
});

test('PATCH, archive and unarchive work like agents; DELETE is 405', async () => {
  const { skill, match } = await createSkill(world.client);
  const patched = await world.client.patch(`/api/v1/skills/${skill.id}`, { description: 'does things', labels: { a: 'b' } }, match);
  assert.is(patched.status, 200);
  assert.is(patched.body.version, 2);
  const archived = await world.client.post(`/api/v1/skills/${skill.id}/archive`, undefined, ifMatch(patched));
  assert.is(archived.status, 200);
  assert.ok(archived.body.archived_at);
  const listed = await world.client.get('/api/v1/skills?archived=true&label=a:b');
  assert.equal(listed.body.items.map((s: any) => s.id), [skill.id]);
  const active = await world.client.get('/api/v1/skills?archived=false&q=DOES');
  assert.equal(active.body.items, []);
  const restored = await world.client.post(`/api/v1/skills/${skill.id}/unarchive`, undefined, ifMatch(archived));
  assert.not.ok('archived_at' in restored.body);
  assert.equal((await world.client.get('/api/v1/skills?archived=false&q=DOES')).body.items.map((s: any) => s.id), [skill.id]);
  assert.is((await world.client.delete(`/api/v1/skills/${skill.id}`)).status, 405);
  const nine = Array.from({ length: 9 }, (_, i) => `label=k${i}:v`).join('&');
  assert.is((await world.client.get(`/api/v1/skills?${nine}`)).status, 400);
});

test.run();
