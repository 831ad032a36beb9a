// The reviewer inside the attempt: each tool call is judged by a separate model request before
// it runs; verdicts become `review` items, flagged calls are denied or wait for approval, and
// reviewer failures (timeout, unparseable answer, no model) follow on_error.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startModelServer, type ModelServer, type ModelScript, type RecordedRequest } from '../../../bench/model-server.js';
import type { AttemptStart } from '../../../actors/attempt/index.js';
import { isShellLike } from '../../../actors/attempt/reviewer.js';
import { decideReview, parseVerdict } from '../../../actors/attempt/reviewer-verdict.js';
import { assertProtocol, attemptPool, checkpoints, continueFrom, itemsOfKind, makeStart, startAttempt, type AttemptRun } from './attempt-harness.js';

const test = suite('actors/attempt/reviewer');
const pool = attemptPool();
const servers: ModelServer[] = [];
const UTILITIES = { utilities: { enabled: true } };
const RUN_SHELL = { name: 'run_shell', description: 'Runs a shell command', parameters_json_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } };

interface Model {
  server: ModelServer;
  agent: () => RecordedRequest[];
  reviews: () => RecordedRequest[];
}

/** The reviewer's request carries the reviewer framing as its system message. */
function isReview(request: RecordedRequest): boolean {
  const system = request.body?.messages?.[0];
  return system?.role === 'system' && String(system.content).startsWith('You review tool calls');
}

/** A model server answering agent requests from `agent` (a queue) and reviews with `review`. */
async function model(agent: ModelScript[], review: (request: RecordedRequest) => ModelScript): Promise<Model> {
  const queue = [...agent];
  const server = await startModelServer({ script: (request) => (isReview(request) ? review(request) : queue.shift()) });
  servers.push(server);
  return { server, agent: () => server.requests.filter((r) => !isReview(r)), reviews: () => server.requests.filter(isReview) };
}

function verdict(risk: string, reason: string): ModelScript {
  return { type: 'text', text: JSON.stringify({ risk, reason }) };
}

function call(id: string, name: string, args: unknown): { id: string; name: string; arguments: string } {
  return { id, name, arguments: JSON.stringify(args) };
}

function start(m: Model, config: Record<string, unknown>, patch: Partial<AttemptStart> = {}): AttemptStart {
  return makeStart(m.server, { config: { toolsets: UTILITIES, ...config }, ...patch });
}

function reviewItems(run: AttemptRun): Array<Record<string, unknown>> {
  return itemsOfKind(run.messages, 'review').map((m) => m.item.content);
}

function toolResults(run: AttemptRun): Array<Record<string, unknown>> {
  return itemsOfKind(run.messages, 'tool_result').map((m) => m.item.content);
}

test.after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await pool.destroy();
});

test('a high-risk verdict with on_flagged deny: the call does not run, the reason is fed back, the run completes', async () => {
  const m = await model([{ type: 'tool_calls', calls: [call('c1', 'echo', { text: 'rm -rf /' })] }, { type: 'text', text: 'I will not do that.' }], () => verdict('high', 'Echoes a destructive command.'));
  const run = startAttempt(pool, start(m, { reviewer: { instruction: 'Be strict about deletions.', on_flagged: 'deny', risk_threshold: 'medium' } }));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'I will not do that.');
  assertProtocol(run.messages, 1);
  assert.equal(reviewItems(run), [{ tool_call_id: 'c1', tool_name: 'echo', risk: 'high', reason: 'Echoes a destructive command.', decision: 'denied', risk_threshold: 'medium' }]);
  const result = toolResults(run)[0]!;
  assert.is(result.output, undefined, 'the tool did not run');
  assert.is(result.error, 'the reviewer denied this call (risk high): Echoes a destructive command.');
  const fedBack = m.agent()[1]?.body.messages.find((x: { role: string }) => x.role === 'tool');
  assert.match(fedBack.content, /Echoes a destructive command/);
  // The review item precedes the result, and both are committed with the step's checkpoint.
  const kinds = run.messages.flatMap((x) => (x.type === 'item.completed' ? [x.item.kind] : []));
  assert.equal(kinds, ['user_message', 'tool_call', 'review', 'tool_result', 'text_message']);
  const review = m.reviews()[0]!.body;
  assert.is(review.tools, undefined, 'the reviewer is offered no tools');
  assert.match(review.messages[0].content, /Be strict about deletions\./);
  assert.match(review.messages[0].content, /"risk": "<none\|low\|medium\|high\|critical>"/);
  assert.match(review.messages[1].content, /Tool: utilities\.echo/);
  assert.match(review.messages[1].content, /rm -rf \//);
  assert.match(review.messages[1].content, /The user's latest request \(context only\): Hello/);
  assert.is(done.usage.requests, 2, 'reviews are not agent requests');
  assert.is(done.usage.review_requests, 1);
});

test('a flagged call with on_flagged ask waits for approval; once approved it runs without a second review', async () => {
  const m = await model([{ type: 'tool_calls', calls: [call('c_add', 'add', { numbers: [1, 2] })] }, { type: 'text', text: 'Three.' }], () => verdict('critical', 'Arithmetic is dangerous today.'));
  const first = startAttempt(pool, start(m, { reviewer: { on_flagged: 'ask' } }));
  const waiting = await first.done;
  assert.is(waiting.outcome, 'waiting');
  assert.is(waiting.wait_reason, 'approval');
  const pending = waiting.pending?.approvals[0];
  assert.equal([pending?.tool_call_id, pending?.tool_name, pending?.arguments], ['c_add', 'add', { numbers: [1, 2] }]);
  assert.equal(pending?.presentation.review, { risk: 'critical', reason: 'Arithmetic is dangerous today.' });
  assert.is(reviewItems(first)[0]?.decision, 'approval_required');
  assert.is(toolResults(first).length, 0);
  assert.is(first.messages.at(-2)?.type, 'checkpoint', 'the review item is committed with the waiting checkpoint');

  const last = checkpoints(first.messages).at(-1)!;
  const successor = continueFrom(start(m, { reviewer: { on_flagged: 'ask' } }), last, {
    run: { ...makeStart(m.server).run, id: 'run_2', attempt_id: 'att_2', input: {} },
    resume: { approvals: { c_add: { action: 'approve' } } },
    checkpoint_seq: 0,
    next_ordinal: 1,
  });
  const second = startAttempt(pool, successor);
  const done = await second.done;
  assert.is(done.outcome, 'completed');
  assert.equal(toolResults(second)[0]?.output, { sum: 3 });
  assert.is(reviewItems(second).length, 0);
  assert.is(m.reviews().length, 1, 'the person decided; the reviewer is not asked again');
});

test('a low-risk verdict lets the call run and records an allowed review', async () => {
  const m = await model([{ type: 'tool_calls', calls: [call('c1', 'add', { numbers: [4, 5] })] }, { type: 'text', text: 'Nine.' }], () => ({ type: 'text', text: ['```json\n{"risk": "LOW", ', '"reason": "Pure arithmetic."}\n```'] }));
  const run = startAttempt(pool, start(m, { reviewer: { on_flagged: 'deny' } }));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.equal(toolResults(run)[0]?.output, { sum: 9 });
  assert.equal(reviewItems(run)[0], { tool_call_id: 'c1', tool_name: 'add', risk: 'low', reason: 'Pure arithmetic.', decision: 'allowed', risk_threshold: 'medium' });
});

test('a reviewer that does not answer within timeout_seconds follows on_error (deny)', async () => {
  const m = await model([{ type: 'tool_calls', calls: [call('c1', 'echo', { text: 'x' })] }, { type: 'text', text: 'Could not.' }], () => ({ type: 'hang' }));
  const run = startAttempt(pool, start(m, { reviewer: { timeout_seconds: 1, on_error: 'deny' } }));
  const began = Date.now();
  const done = await run.done;
  assert.ok(Date.now() - began < 5_000, 'the deadline ended the review');
  assert.is(done.outcome, 'completed');
  assert.is(await m.reviews()[0]?.closed, 'aborted', 'the hanging review request was abandoned');
  const review = reviewItems(run)[0]!;
  assert.is(review.decision, 'denied');
  assert.is(review.risk, null);
  assert.is(review.error, 'the reviewer did not answer within 1 s');
  assert.is(toolResults(run)[0]?.error, 'the reviewer could not assess this call (the reviewer did not answer within 1 s), so it was denied');
  assert.is(done.output, 'Could not.');
});

test('rules override the threshold and on_flagged per tool (toolset.tool before the bare name)', async () => {
  const m = await model(
    [{ type: 'tool_calls', calls: [call('c_add', 'add', { numbers: [1] }), call('c_echo', 'echo', { text: 'e' }), call('c_time', 'current_time', {})] }, { type: 'text', text: 'ok' }],
    () => verdict('high', 'Looks risky.'),
  );
  const rules = { 'utilities.add': { risk_threshold: 'critical' }, add: { risk_threshold: 'low' }, echo: { on_flagged: 'ask' } };
  const run = startAttempt(pool, start(m, { reviewer: { on_flagged: 'deny', rules } }));
  const done = await run.done;
  assert.is(done.outcome, 'waiting');
  assert.equal(
    reviewItems(run).map((r) => [r.tool_name, r.decision, r.risk_threshold]),
    [
      ['add', 'allowed', 'critical'],
      ['echo', 'approval_required', 'medium'],
      ['current_time', 'denied', 'medium'],
    ],
  );
  assert.equal(toolResults(run).map((r) => [r.tool_call_id, 'output' in r ? 'ran' : 'refused']), [['c_add', 'ran'], ['c_time', 'refused']]);
  assert.equal(done.pending?.approvals.map((p) => p.tool_call_id), ['c_echo']);
});

test('an unparseable verdict follows on_error (allow runs the call, ask waits for approval)', async () => {
  const allowing = await model([{ type: 'tool_calls', calls: [call('c1', 'add', { numbers: [1, 1] })] }, { type: 'text', text: 'Two.' }], () => ({ type: 'text', text: 'Seems fine to me!' }));
  const run = startAttempt(pool, start(allowing, { reviewer: { on_error: 'allow' } }));
  assert.is((await run.done).outcome, 'completed');
  assert.equal(toolResults(run)[0]?.output, { sum: 2 });
  const review = reviewItems(run)[0]!;
  assert.equal([review.decision, review.risk], ['allowed', null]);
  assert.is(review.error, `the reviewer's answer is not a verdict: "Seems fine to me!"`);

  const asking = await model([{ type: 'tool_calls', calls: [call('c1', 'add', { numbers: [1, 1] })] }], () => verdict('dire', 'unknown level'));
  const waiting = await startAttempt(pool, start(asking, { reviewer: { on_error: 'ask' } })).done;
  assert.is(waiting.wait_reason, 'approval');
  const shown = waiting.pending?.approvals[0]?.presentation.review as { risk: unknown; error: string } | undefined;
  assert.is(shown?.risk, null);
  assert.match(String(shown?.error), /not a verdict/);
});

test('an unavailable reviewer model does not stop the attempt: reviews follow on_error without a request', async () => {
  const m = await model([{ type: 'tool_calls', calls: [call('c1', 'echo', { text: 'x' })] }, { type: 'text', text: 'ok' }], () => verdict('none', 'unused'));
  const patch = { reviewer_model: null, reviewer_model_error: { code: 'disabled', message: 'model reviewer-mini is disabled' } };
  const run = startAttempt(pool, start(m, { reviewer: { model: 'reviewer-mini' } }, patch));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.is(reviewItems(run)[0]?.error, 'the reviewer model is unavailable: model reviewer-mini is disabled');
  assert.is(reviewItems(run)[0]?.decision, 'denied', 'on_error defaults to deny');
  assert.is(m.reviews().length, 0);
});

test('a resolved reviewer model is used, with its settings and the reviewer model_settings', async () => {
  const agent = await model([{ type: 'tool_calls', calls: [call('c1', 'echo', { text: 'x' })] }, { type: 'text', text: 'ok' }], () => verdict('none', 'unused'));
  const reviewer = await model([], () => verdict('none', 'Harmless.'));
  const reviewerModel = { api: 'openai-chat', base_url: reviewer.server.url, model: 'reviewer-mini', settings: { temperature: 0.5 } };
  const run = startAttempt(pool, start(agent, { reviewer: { model: 'rev', model_settings: { temperature: 0 } } }, { reviewer_model: reviewerModel }));
  assert.is((await run.done).outcome, 'completed');
  assert.is(agent.reviews().length, 0);
  assert.is(reviewer.reviews()[0]?.body.model, 'reviewer-mini');
  assert.is(reviewer.reviews()[0]?.body.temperature, 0);
  assert.is(reviewItems(run)[0]?.decision, 'allowed');
});

test('client tool calls are reviewed before they go to the client; shell-like tools get shell_instruction too', async () => {
  const m = await model([{ type: 'tool_calls', calls: [call('c_sh', 'run_shell', { command: 'ls' })] }], () => verdict('low', 'Lists files.'));
  const reviewer = { instruction: 'General policy.', shell_instruction: 'Shell policy: no sudo.' };
  const done = await startAttempt(pool, start(m, { toolsets: {}, client_tools: [RUN_SHELL], reviewer })).done;
  assert.is(done.wait_reason, 'client_tool');
  assert.equal(done.pending?.calls.map((c) => c.tool_call_id), ['c_sh']);
  const system = String(m.reviews()[0]?.body.messages[0].content);
  assert.ok(system.includes('General policy.') && system.includes('Shell policy: no sudo.'), system);

  const plain = await model([{ type: 'tool_calls', calls: [call('c1', 'echo', { text: 'x' })] }, { type: 'text', text: 'ok' }], () => verdict('low', 'fine'));
  await startAttempt(pool, start(plain, { reviewer })).done;
  assert.not.match(String(plain.reviews()[0]?.body.messages[0].content), /Shell policy/);
});

test('ask_user and calls refused by policy are not reviewed', async () => {
  const m = await model([{ type: 'tool_calls', calls: [call('q1', 'ask_user', { question: 'Which?' }), call('c1', 'add', { numbers: [1] })] }], () => verdict('low', 'x'));
  const toolsets = { utilities: { enabled: true, tools: { add: { permission: 'deny' } } } };
  const done = await startAttempt(pool, start(m, { toolsets, user_questions: true, reviewer: {} })).done;
  assert.is(done.wait_reason, 'user_question');
  assert.is(m.reviews().length, 0);
});

test('parseVerdict reads fenced, prose-wrapped and broken-off verdicts, and refuses unknown levels', () => {
  assert.equal(parseVerdict('{"risk":"medium","reason":"r"}'), { risk: 'medium', reason: 'r' });
  assert.equal(parseVerdict('Verdict:\n```json\n{"risk": " High ", "reason": "deletes"}\n```'), { risk: 'high', reason: 'deletes' });
  assert.equal(parseVerdict('{"risk_level": "none"}'), { risk: 'none', reason: '' });
  assert.equal(parseVerdict('{"risk": "critical", "reason": "drops the \\"users\\" tab'), { risk: 'critical', reason: 'drops the "users" tab' });
  assert.is(parseVerdict('{"risk": "severe", "reason": "?"}'), undefined);
  assert.is(parseVerdict('low'), undefined);
  assert.is(parseVerdict(''), undefined);
});

test('decideReview: at or above the threshold is flagged; defaults are medium, deny, deny', () => {
  const tool = { name: 'echo', toolset: 'utilities' };
  const at = (risk: 'low' | 'medium') => decideReview({}, tool, { ok: true, verdict: { risk, reason: '' } });
  assert.is(at('low'), 'allowed');
  assert.is(at('medium'), 'denied');
  assert.is(decideReview({ risk_threshold: 'none' }, tool, { ok: true, verdict: { risk: 'none', reason: '' } }), 'denied');
  assert.is(decideReview({}, tool, { ok: false, error: 'x' }), 'denied');
  assert.is(decideReview({ on_error: 'allow' }, tool, { ok: false, error: 'x' }), 'allowed');
});

test('isShellLike matches whole words of the tool or toolset name', () => {
  for (const name of ['run_shell', 'bash', 'execCommand', 'exec', 'terminal-run', 'PowerShell']) assert.ok(isShellLike({ name }), name);
  for (const name of ['execute_sql', 'shellfish', 'add', 'commander']) assert.not.ok(isShellLike({ name }), name);
  assert.ok(isShellLike({ name: 'run', toolset: 'shell' }));
});

test.run();
