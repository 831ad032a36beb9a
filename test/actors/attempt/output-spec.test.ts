// Structured output: the final answer parsed as JSON and validated against output_spec, with
// re-asks bounded by retries.output.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelServer, ModelScript } from '../../../bench/model-server.js';
import { assertProtocol, attemptPool, modelServers, checkpoints, decodeState, itemsOfKind, makeStart, startAttempt } from './attempt-harness.js';

const test = suite('actors/attempt/output-spec');
const pool = attemptPool();
const servers = modelServers();
const SCHEMA = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };

const server = (script: ModelScript[]): Promise<ModelServer> => servers.start({ script });

test.after(async () => {
  await servers.closeAll();
  await pool.destroy();
});

test('an invalid answer is re-asked once, then the valid JSON completes the run as an output item', async () => {
  const model = await server([
    { type: 'text', text: 'The answer is 42.' },
    { type: 'text', text: '{"answer": 42}' },
  ]);
  const run = startAttempt(pool, makeStart(model, { config: { instructions: 'Compute.', output_spec: { name: 'result', schema: SCHEMA } } }));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.equal(done.output, { answer: 42 });
  assertProtocol(run.messages, 1);
  assert.equal(itemsOfKind(run.messages, 'output').map((m) => m.item.content), [{ output: { answer: 42 } }]);
  assert.equal(itemsOfKind(run.messages, 'notice')[0]?.item.content.code, 'output_invalid');
  const first = model.requests[0]?.body.messages[0];
  assert.is(first.role, 'system');
  assert.ok(first.content.startsWith('Compute.\n\n'), 'the agent instructions come first');
  assert.ok(first.content.includes(JSON.stringify(SCHEMA)), 'the schema is in the instructions');
  const reask = model.requests[1]?.body.messages.at(-1);
  assert.is(reask.role, 'user');
  assert.match(reask.content, /not valid JSON/);
  assert.equal(decodeState(checkpoints(run.messages).at(-1)!).final, { output: { answer: 42 } });
  assert.is(done.usage.requests, 2);
});

test('a schema violation is explained in the re-ask; a fenced JSON answer is accepted', async () => {
  const model = await server([
    { type: 'text', text: '{"answer": "forty-two"}' },
    { type: 'text', text: '```json\n{"answer": 42}\n```' },
  ]);
  const done = await startAttempt(pool, makeStart(model, { config: { output_spec: { schema: SCHEMA } } })).done;
  assert.equal(done.output, { answer: 42 });
  assert.match(model.requests[1]?.body.messages.at(-1).content, /\/answer must be number/);
});

test('when re-asks are used up the run fails with output_invalid', async () => {
  const model = await server([
    { type: 'text', text: 'nope' },
    { type: 'text', text: 'still nope' },
    { type: 'text', text: '{"answer": 1}' },
  ]);
  const done = await startAttempt(pool, makeStart(model, { config: { output_spec: { schema: SCHEMA } } })).done;
  assert.is(done.outcome, 'failed');
  assert.is(done.failure?.code, 'output_invalid');
  assert.is(model.requests.length, 2, 'retries.output defaults to one re-ask');

  const strict = await server([{ type: 'text', text: 'nope' }]);
  const none = await startAttempt(pool, makeStart(strict, { config: { output_spec: { schema: SCHEMA }, retries: { output: 0 } } })).done;
  assert.is(none.failure?.code, 'output_invalid');
  assert.is(strict.requests.length, 1);
});

test('variants: the answer names its variant and the value is checked against that schema', async () => {
  const variants = [
    { name: 'result', schema: SCHEMA },
    { name: 'refusal', description: 'when the task cannot be done', schema: { type: 'string' } },
  ];
  const model = await server([
    { type: 'text', text: '{"variant": "other", "value": 1}' },
    { type: 'text', text: '{"variant": "refusal", "value": "cannot compute"}' },
  ]);
  const done = await startAttempt(pool, makeStart(model, { config: { output_spec: { variants } } })).done;
  assert.is(done.outcome, 'completed');
  assert.equal(done.output, { variant: 'refusal', value: 'cannot compute' });
  assert.match(model.requests[1]?.body.messages.at(-1).content, /"variant" must be one of "result", "refusal"/);
  assert.match(model.requests[0]?.body.messages[0].content, /"refusal" \(when the task cannot be done\)/);
});

test('an invalid output schema fails the attempt with invalid_config before any request', async () => {
  const model = await server([]);
  const done = await startAttempt(pool, makeStart(model, { config: { output_spec: { schema: { type: 'no-such-type' } } } })).done;
  assert.is(done.failure?.code, 'invalid_config');
  assert.is(model.requests.length, 0);
});

test.run();
