// Tool calls inside the attempt: server tools (utilities toolset) in a loop, errors fed back,
// client tools and approvals as waits, and successor runs resuming with the batch.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelServer, ModelScript } from '../../../bench/model-server.js';
import type { AttemptStart } from '../../../actors/attempt/index.js';
import { assertProtocol, attemptPool, modelServers, checkpoints, continueFrom, decodeState, itemsOfKind, makeStart, startAttempt, type AttemptRun } from './attempt-harness.js';

const test = suite('actors/attempt/tool-settlement');
const pool = attemptPool();
const servers = modelServers();
const UTILITIES = { utilities: { enabled: true } };
const WEATHER = { name: 'get_weather', description: 'Weather at a place', parameters_json_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

const server = (script: ModelScript[]): Promise<ModelServer> => servers.start({ script });

function call(id: string, name: string, args: unknown): { id: string; name: string; arguments: string } {
  return { id, name, arguments: JSON.stringify(args) };
}

/** The successor of a waiting run: a new run continuing from the waiting run's last checkpoint. */
async function resumeWith(first: AttemptRun, start: AttemptStart, resume: Record<string, unknown>): Promise<AttemptRun> {
  await first.done;
  const last = checkpoints(first.messages).at(-1)!;
  const run = { ...start.run, id: 'run_2', attempt_id: 'att_2', input: {} };
  return startAttempt(pool, continueFrom(start, last, { run, resume, checkpoint_seq: 0, next_ordinal: 1 }));
}

test.after(async () => {
  await servers.closeAll();
  await pool.destroy();
});

test('the utilities toolset runs a tool loop: call add, feed the result back, then answer', async () => {
  const model = await server([{ type: 'tool_calls', calls: [{ ...call('call_1', 'add', { numbers: [2, 3, 4] }), pieces: 3 }] }, { type: 'text', text: 'The sum is 9.' }]);
  const run = startAttempt(pool, makeStart(model, { config: { toolsets: UTILITIES } }));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'The sum is 9.');
  assertProtocol(run.messages, 1);
  assert.equal(model.requests[0]?.body.tools.map((t: { function: { name: string } }) => t.function.name), ['current_time', 'echo', 'add']);
  const toolCall = itemsOfKind(run.messages, 'tool_call')[0]!;
  assert.equal(toolCall.item.content, { tool_call_id: 'call_1', tool_name: 'add', arguments: '{"numbers":[2,3,4]}' });
  const argDeltas = run.messages.filter((m) => m.type === 'item.delta' && m.ordinal === toolCall.ordinal);
  // Three pieces on the wire; pieces that arrive in one read are coalesced into one delta.
  assert.ok(argDeltas.length >= 1 && argDeltas.length <= 3);
  assert.is(argDeltas.map((m) => (m.type === 'item.delta' ? m.delta.arguments : '')).join(''), '{"numbers":[2,3,4]}');
  assert.equal(itemsOfKind(run.messages, 'tool_result')[0]?.item.content, { tool_call_id: 'call_1', tool_name: 'add', output: { sum: 9 } });
  const toolMessage = model.requests[1]?.body.messages.find((m: { role: string }) => m.role === 'tool');
  assert.equal(toolMessage, { role: 'tool', tool_call_id: 'call_1', content: '{"sum":9}' });
  assert.is(checkpoints(run.messages).length, 3, 'after the response, after its tool results, after the answer');
  assert.equal(done.history_append?.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
});

test('unknown tools and invalid arguments are fed back as error results', async () => {
  const model = await server([
    { type: 'tool_calls', calls: [call('c1', 'teleport', {}), call('c2', 'add', { numbers: 'many' }), call('c3', 'echo', { text: 'hi' })] },
    { type: 'text', text: 'done' },
  ]);
  const run = startAttempt(pool, makeStart(model, { config: { toolsets: UTILITIES } }));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  const results = itemsOfKind(run.messages, 'tool_result').map((m) => m.item.content);
  assert.is(results[0]?.error, 'unknown tool "teleport"');
  assert.match(String(results[1]?.error), /^invalid arguments: \/numbers must be array/);
  assert.equal(results[2]?.output, { text: 'hi' });
  const fedBack = model.requests[1]?.body.messages.filter((m: { role: string }) => m.role === 'tool');
  assert.equal(fedBack[0].content, JSON.stringify({ error: 'unknown tool "teleport"' }));
});

test('consecutive tool errors beyond retries.tools fail the run', async () => {
  const model = await server([
    { type: 'tool_calls', calls: [call('c1', 'nope', {})] },
    { type: 'tool_calls', calls: [call('c2', 'nope', {})] },
    { type: 'text', text: 'unreached' },
  ]);
  const done = await startAttempt(pool, makeStart(model, { config: { toolsets: UTILITIES, retries: { tools: 1 } } })).done;
  assert.is(done.outcome, 'failed');
  assert.is(done.failure?.code, 'tool_retries_exhausted');
  assert.is(model.requests.length, 2);
});

test('a client tool call waits with pending.calls; the successor feeds the returned value back', async () => {
  const model = await server([
    { type: 'tool_calls', calls: [call('c_echo', 'echo', { text: 'x' }), call('c_w', 'get_weather', { city: 'Oslo' })] },
    { type: 'text', text: 'It is 21 degrees.' },
  ]);
  const start = makeStart(model, { config: { toolsets: UTILITIES, client_tools: [WEATHER] } });
  const first = startAttempt(pool, start);
  const waiting = await first.done;
  assert.is(waiting.outcome, 'waiting');
  assert.is(waiting.wait_reason, 'client_tool');
  assert.equal(waiting.pending?.approvals, []);
  assert.equal(waiting.pending?.calls.map((c) => [c.tool_call_id, c.tool_name, c.arguments]), [['c_w', 'get_weather', { city: 'Oslo' }]]);
  assert.is(waiting.pending?.calls[0]?.presentation.description, 'Weather at a place');
  assert.is(itemsOfKind(first.messages, 'tool_result').length, 1, 'the server tool of the same response ran before the wait');
  assert.is(first.messages.at(-2)?.type, 'checkpoint', 'the wait is committed with its checkpoint');
  assert.equal(decodeState(checkpoints(first.messages).at(-1)!).pending, waiting.pending);
  assert.equal(waiting.history_append?.map((m) => m.role), ['user', 'assistant', 'tool']);

  const second = await resumeWith(first, start, { calls: { c_w: { status: 'returned', value: { temp: 21 } } } });
  const done = await second.done;
  assert.is(done.outcome, 'completed');
  assertProtocol(second.messages, 1);
  assert.equal(itemsOfKind(second.messages, 'tool_result')[0]?.item.content, { tool_call_id: 'c_w', tool_name: 'get_weather', output: { temp: 21 } });
  const sent = model.requests[1]?.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>;
  assert.equal(sent.map((m) => m.role), ['user', 'assistant', 'tool', 'tool']);
  assert.equal(sent[3], { role: 'tool', tool_call_id: 'c_w', content: '{"temp":21}' });
  assert.equal(done.history_append?.map((m) => m.role), ['tool', 'assistant'], 'the successor appends only what it added');
  assert.is(done.usage.requests, 1, 'usage is per run');
});

test('a tool needing approval waits; approve executes it, and the resume input follows the results', async () => {
  const model = await server([{ type: 'tool_calls', calls: [call('c_add', 'add', { numbers: [1, 1] })] }, { type: 'text', text: 'Two.' }]);
  const start = makeStart(model, { config: { toolsets: { utilities: { enabled: true, tools: { add: { permission: 'ask' } } } } } });
  const first = startAttempt(pool, start);
  const waiting = await first.done;
  assert.is(waiting.wait_reason, 'approval');
  assert.equal(waiting.pending?.approvals.map((c) => [c.tool_call_id, c.tool_name, c.arguments]), [['c_add', 'add', { numbers: [1, 1] }]]);
  assert.equal(waiting.pending?.calls, []);
  assert.is(itemsOfKind(first.messages, 'tool_result').length, 0);

  const second = await resumeWith(first, start, { approvals: { c_add: { action: 'approve' } }, input: { content: [{ type: 'text', text: 'thanks' }] } });
  const done = await second.done;
  assert.is(done.outcome, 'completed');
  assert.equal(itemsOfKind(second.messages, 'tool_result')[0]?.item.content.output, { sum: 2 });
  assert.equal(itemsOfKind(second.messages, 'user_message')[0]?.item.content, { content: [{ type: 'text', text: 'thanks' }] });
  assert.equal(model.requests[1]?.body.messages.map((m: { role: string }) => m.role), ['user', 'assistant', 'tool', 'user']);
});

test('a denied approval is fed back as an error result and the model continues', async () => {
  const model = await server([{ type: 'tool_calls', calls: [call('c_add', 'add', { numbers: [1, 1] })] }, { type: 'text', text: 'Understood.' }]);
  const start = makeStart(model, { config: { toolsets: { utilities: { enabled: true, config: { permission: 'ask' } } } } });
  const first = startAttempt(pool, start);
  assert.is((await first.done).wait_reason, 'approval', 'the toolset permission is inherited');
  const second = await resumeWith(first, start, { approvals: { c_add: { action: 'deny' } } });
  const done = await second.done;
  assert.is(done.outcome, 'completed');
  assert.is(itemsOfKind(second.messages, 'tool_result')[0]?.item.content.error, 'the call was denied by the user');
  assert.is(done.output, 'Understood.');
});

test('a denied-by-policy tool answers with an error at once; a tool allowing itself overrides an ask toolset', async () => {
  const model = await server([{ type: 'tool_calls', calls: [call('c1', 'add', { numbers: [1] }), call('c2', 'echo', { text: 'e' })] }, { type: 'text', text: 'ok' }]);
  const toolsets = { utilities: { enabled: true, config: { permission: 'ask' }, tools: { add: { permission: 'deny' }, echo: { permission: 'allow' } } } };
  const run = startAttempt(pool, makeStart(model, { config: { toolsets } }));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  const results = itemsOfKind(run.messages, 'tool_result').map((m) => m.item.content);
  assert.is(results[0]?.error, 'this tool is not permitted');
  assert.equal(results[1]?.output, { text: 'e' });
});

test('ask_user waits as a user question; the answer is fed back as the tool result', async () => {
  const model = await server([{ type: 'tool_calls', calls: [call('q1', 'ask_user', { question: 'Which colour?', choices: ['red', 'blue'] })] }, { type: 'text', text: 'Blue it is.' }]);
  const start = makeStart(model, { config: { user_questions: true } });
  const first = startAttempt(pool, start);
  const waiting = await first.done;
  assert.is(waiting.wait_reason, 'user_question');
  assert.equal(waiting.pending?.calls[0]?.presentation, { kind: 'user_question', question: 'Which colour?', choices: ['red', 'blue'] });
  const second = await resumeWith(first, start, { calls: { q1: { status: 'returned', value: 'blue' } } });
  const done = await second.done;
  assert.is(done.output, 'Blue it is.');
  assert.is(model.requests[1]?.body.messages.at(-1).content, 'blue');
});

test('a successor started without a checkpoint resumes from the thread history', async () => {
  const model = await server([{ type: 'tool_calls', calls: [call('c_w', 'get_weather', { city: 'Rome' })] }, { type: 'text', text: 'Sunny.' }]);
  const start = makeStart(model, { config: { client_tools: [WEATHER] } });
  const waiting = await startAttempt(pool, start).done;
  assert.is(waiting.outcome, 'waiting');
  const successor = { ...start, run: { ...start.run, id: 'run_2', input: {} }, history: waiting.history_append!, resume: { calls: { c_w: { status: 'returned', value: 'sunny' } } } };
  const run = startAttempt(pool, successor);
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.equal(completedItems(run).map((k) => k), ['tool_result', 'text_message']);
  assert.equal(done.history_append?.map((m) => m.role), ['tool', 'assistant']);
});

function completedItems(run: AttemptRun): string[] {
  return run.messages.flatMap((m) => (m.type === 'item.completed' ? [m.item.kind] : []));
}

test.run();
