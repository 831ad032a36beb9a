import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AppError, resolveAgentRevision } from '../../../runtime/index.js';
import { createAgent, ifMatch, startAgentWorld, type AgentWorld } from '../../api/agents/agent-test-support.js';

const test = suite('runtime/agents/resolve-revision');
let world: AgentWorld;

test.before(async () => {
  world = await startAgentWorld('resolve_revision');
});
test.after(async () => {
  await world?.stop();
});

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, AppError);
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

test('without a pin it picks the head\'s default revision; a pin picks that revision', async () => {
  const { agent, match } = await createAgent(world.client, { config: { model: 'gpt-test', instructions: 'one' } });
  const two = await world.client.post(`/api/v1/agents/${agent.id}/revisions`, { config: { model: 'gpt-test', instructions: 'two' } }, match);
  const pool = world.service.services.pool;
  const current = await resolveAgentRevision(pool, world.seeded.workspace_id, agent.id);
  assert.is(current.revision.id, two.body.id);
  assert.is(current.revision.number, 2);
  assert.is(current.revision.config.instructions, 'two');
  assert.is(current.agent.id, agent.id);
  const pinned = await resolveAgentRevision(pool, world.seeded.workspace_id, agent.id, agent.default_revision_id);
  assert.is(pinned.revision.number, 1);
  assert.is(pinned.revision.config.model, 'gpt-test');
  assert.is((await resolveAgentRevision(pool, world.seeded.workspace_id, agent.id, null)).revision.id, two.body.id);
});

test('an archived head starts no new run: conflict "agent is archived"; unarchived it resolves again', async () => {
  const { agent, match } = await createAgent(world.client, {});
  const archived = await world.client.post(`/api/v1/agents/${agent.id}/archive`, undefined, match);
  const pool = world.service.services.pool;
  const error = await refusal(resolveAgentRevision(pool, world.seeded.workspace_id, agent.id));
  assert.is(error.code, 'conflict');
  assert.is(error.status, 409);
  assert.is(error.message, 'agent is archived');
  assert.is((await refusal(resolveAgentRevision(pool, world.seeded.workspace_id, agent.id, agent.default_revision_id))).code, 'conflict');
  await world.client.post(`/api/v1/agents/${agent.id}/unarchive`, undefined, ifMatch(archived));
  assert.is((await resolveAgentRevision(pool, world.seeded.workspace_id, agent.id)).revision.id, agent.default_revision_id);
});

test('a missing or foreign agent, and a revision of another agent, are 404', async () => {
  const pool = world.service.services.pool;
  const { agent } = await createAgent(world.client, {});
  const second = await createAgent(world.client, {});
  assert.is((await refusal(resolveAgentRevision(pool, world.seeded.workspace_id, 'ap_missing'))).code, 'not_found');
  assert.is((await refusal(resolveAgentRevision(pool, world.otherWorkspaceId, agent.id))).code, 'not_found');
  assert.is((await refusal(resolveAgentRevision(pool, world.seeded.workspace_id, agent.id, second.agent.default_revision_id))).code, 'not_found');
  assert.is((await refusal(resolveAgentRevision(pool, world.seeded.workspace_id, agent.id, 'apr_missing'))).code, 'not_found');
});

test.run();
