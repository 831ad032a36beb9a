import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { CHANNEL_STEER, engineFor } from '../../../actors/index.js';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/steer');
let f: RunFixture;
let calls = 0;

test.before(async () => {
  // The first model response is a slow tool call (the model server paces its chunks), so a
  // steer sent while it streams reliably arrives before the run's next model request.
  f = await startRunFixture({
    tokenDelayMs: 60,
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } } },
    script: () =>
      ++calls === 1
        ? { type: 'tool_calls', calls: [{ id: 'call_s', name: 'echo', arguments: '{"text":"first step"}', pieces: 10 }] }
        : { type: 'text', text: 'steered answer' },
  });
});
test.after(async () => {
  await f?.stop();
});

test('a steer entry joins the running run before its next model request; on an idle thread it starts a run', async () => {
  const first = await send(f, 'start the work');
  await until(() => f.model.requests.length, (n) => n >= 1);
  const steer = await send(f, 'steer-note: also mention blue', { delivery: 'steer' });
  assert.is(steer.status, 201);
  assert.is(steer.body.run, null, 'the steer joins the running run instead of starting one');
  const run = await waitForRun(f, first.body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  const entry = (await f.client.get(`/api/v1/threads/${f.threadId}/inbox/${steer.body.entry.id}`)).body;
  assert.is(entry.status, 'incorporated');
  assert.is(entry.assigned_run_id, run.id);
  assert.type(entry.incorporated_checkpoint_seq, 'number');
  assert.match(JSON.stringify(f.model.requests[1]!.body.messages), /steer-note/);
  calls = 1;
  const idle = await send(f, 'steer on idle thread', { delivery: 'steer' });
  await until(() => f.client.get(`/api/v1/threads/${f.threadId}/inbox/${idle.body.entry.id}`), (r) => r.body.status !== 'pending');
  const started = (await f.client.get(`/api/v1/threads/${f.threadId}/inbox/${idle.body.entry.id}`)).body;
  assert.ok(started.assigned_run_id, 'a steer on an idle thread starts a run');
});

// A run started by an inbox POST (an idle thread) does not read the pending steer entries when
// its attempt starts (there were none at its commit: one statement per run fewer); a steer whose
// NOTIFY arrives while the attempt is still being prepared, before its port is open, must still
// reach it. The preparation is held on a lock of the skills table (the pinned skill's read).
test('a steer announced while the attempt is prepared is delivered once its port opens', async () => {
  const skill = await f.client.post('/api/v1/skills', { name: 'Held', description: 'held skill', files: { 'SKILL.md': '---\nname: held\ndescription: held skill\n---\nbody\n' } });
  assert.is(skill.status, 201, JSON.stringify(skill.body));
  const agent = await f.client.post('/api/v1/agents', {
    name: 'held-prepare',
    config: { model: 'fast', instructions: 'Be brief.', toolsets: { utilities: { enabled: true, config: {}, tools: {} } }, skills: [{ skill_id: skill.body.id, revision_id: skill.body.default_revision_id }] },
  });
  assert.is(agent.status, 201, JSON.stringify(agent.body));
  const thread = (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id as string;
  calls = 0;
  const requestsBefore = f.model.requests.length;
  const lock = new pg.Client({ connectionString: f.db.url });
  await lock.connect();
  try {
    await lock.query('begin');
    await lock.query('lock table skills in access exclusive mode');
    const first = await send(f, 'start the held work', { agent_id: agent.body.id }, thread);
    assert.is(first.status, 201, JSON.stringify(first.body));
    assert.is(first.body.run.status, 'running', 'claimed at acceptance by this process');
    const steer = await send(f, 'steer-note: also mention green', { agent_id: agent.body.id, delivery: 'steer' }, thread);
    assert.is(steer.status, 201);
    assert.is(steer.body.run, null);
    // The steer's NOTIFY reaches the worker while the attempt still waits on the lock.
    await new Promise((r) => setTimeout(r, 300));
    assert.is(f.model.requests.length, requestsBefore, 'no model request while the attempt is prepared');
    await lock.query('commit');
    const run = await waitForRun(f, first.body.run.id);
    assert.is(run.status, 'completed', JSON.stringify(run.failure));
    const entry = (await f.client.get(`/api/v1/threads/${thread}/inbox/${steer.body.entry.id}`)).body;
    assert.is(entry.status, 'incorporated', JSON.stringify(entry));
    assert.is(entry.assigned_run_id, run.id);
    assert.match(JSON.stringify(f.model.requests.slice(requestsBefore).map((r) => r.body.messages)), /steer-note: also mention green/);
  } finally {
    await lock.end();
  }
});

// A steer NOTIFY can be handled before the run it names is hosted here: a steer committed right
// after its input can be announced in the same turn of the event loop as that input's commit.
// The worker host keeps such NOTIFYs for a while (bounded) and asks the run to read its steer
// entries when it is hosted. White-box: the race cannot be timed from outside the process.
test('a steer NOTIFY for a run not hosted here is kept, bounded, for when it is', () => {
  const hosts = [...engineFor(f.service.services).localHosts] as unknown as Array<{ onNotify(channel: string, runId: string): void; earlySteers: Map<string, number> }>;
  assert.is(hosts.length, 1);
  const host = hosts[0]!;
  host.onNotify(CHANNEL_STEER, 'run_not_yet_hosted');
  assert.ok(host.earlySteers.has('run_not_yet_hosted'), 'kept for the run');
  for (let i = 0; i < 1_500; i++) host.onNotify(CHANNEL_STEER, `run_elsewhere_${i}`);
  assert.ok(host.earlySteers.size <= 1_000, `bounded (${host.earlySteers.size})`);
  assert.not.ok(host.earlySteers.has('run_not_yet_hosted'), 'the oldest go first');
  host.earlySteers.clear();
});

test.run();
