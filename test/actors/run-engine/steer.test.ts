import { suite } from 'uvu';
import * as assert from 'uvu/assert';
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

test.run();
