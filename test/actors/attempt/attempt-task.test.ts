// The attempt task end to end: a real Piscina pool runs dist/actors/attempt/attempt.task.js
// against the instant local model server (OpenAI Chat protocol).
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelServer, ModelServerOptions } from '../../../bench/model-server.js';
import {
  assertProtocol,
  attemptPool,
  checkpoints,
  completedItems,
  continueFrom,
  decodeState,
  itemsOfKind,
  makeStart,
  modelServers,
  startAttempt,
} from './attempt-harness.js';

const test = suite('actors/attempt/attempt-task');
const pool = attemptPool();
const servers = modelServers();

const server = (options: ModelServerOptions): Promise<ModelServer> => servers.start(options);

test.after(async () => {
  await servers.closeAll();
  await pool.destroy();
});

test('streams text deltas into one text_message item and completes with the text as output', async () => {
  const model = await server({ script: [{ type: 'text', text: ['Hel', 'lo ', 'world'], usage: { prompt_tokens: 7, completion_tokens: 3 } }] });
  const run = startAttempt(pool, makeStart(model, { next_ordinal: 5, checkpoint_seq: 2 }));
  const done = await run.done;
  assertProtocol(run.messages, 5, 3);
  // Deltas that arrive in one network read are coalesced (attempt-port.ts); assertProtocol
  // above checks each falls between its item's start and completion.
  const types = run.messages.filter((m) => m.type !== 'item.delta').map((m) => (m.type.startsWith('item.') ? `${m.type}:${(m as { ordinal: number }).ordinal}` : m.type));
  assert.equal(types, ['item.started:5', 'item.completed:5', 'item.started:6', 'item.completed:6', 'checkpoint', 'done']);
  const [input, text] = completedItems(run.messages);
  assert.equal(input?.item.content, { content: [{ type: 'text', text: 'Hello' }] });
  assert.is(input?.item.kind, 'user_message');
  assert.is(text?.item.kind, 'text_message');
  assert.equal(text?.item.content, { text: 'Hello world' });
  assert.match(text?.item.id ?? '', /^itm_/);
  const deltas = run.messages.filter((m) => m.type === 'item.delta').map((m) => (m.type === 'item.delta' ? m.delta : {}));
  assert.ok(deltas.length >= 1 && deltas.length <= 3, `${deltas.length} deltas`);
  assert.equal(deltas[0], { text: 'Hel' }, 'the first delta goes out alone, never held for the next');
  assert.is(deltas.map((d) => d.text).join(''), 'Hello world', 'the deltas concatenate to the text exactly');
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'Hello world');
  assert.equal(done.usage, { requests: 1, input_tokens: 7, output_tokens: 3 });
  assert.equal(done.history_append, [
    { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
    { role: 'assistant', content: 'Hello world' },
  ]);
  const [checkpoint] = checkpoints(run.messages);
  assert.is(checkpoint?.next_ordinal, 7);
  assert.ok(checkpoint?.state instanceof Uint8Array && checkpoint.state.byteLength > 0);
  assert.equal(decodeState(checkpoint!).final, { output: 'Hello world' });
  const sent = model.requests[0]?.body;
  assert.equal(sent.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
  ]);
  assert.is(sent.model, 'mock-model');
});

test('history from earlier runs precedes the input, and settings merge with config.model_settings winning', async () => {
  const model = await server({ script: [{ type: 'text', text: 'ok' }] });
  const start = makeStart(model, {
    history: [
      { role: 'user', content: 'earlier' },
      { role: 'assistant', content: 'reply' },
    ],
    config: { model_settings: { temperature: 0.2 } },
  });
  start.model.settings = { temperature: 0.9, max_tokens: 50 };
  const done = await startAttempt(pool, start).done;
  assert.is(done.outcome, 'completed');
  const body = model.requests[0]?.body;
  assert.equal(body.messages.map((m: { content: unknown }) => m.content), ['earlier', 'reply', [{ type: 'text', text: 'Hello' }]]);
  assert.is(body.temperature, 0.2);
  assert.is(body.max_tokens, 50);
  assert.is(done.history_append?.length, 2);
});

test('a retryable 429 is retried within the attempt, then the answer completes', async () => {
  const model = await server({ script: [{ type: 'http_error', status: 429, retry_after_ms: 5 }, { type: 'text', text: 'ok' }] });
  const run = startAttempt(pool, makeStart(model));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'ok');
  assert.is(model.requests.length, 2);
  assert.is(done.usage.requests, 1, 'a retry of the same request is not charged again');
  assertProtocol(run.messages, 1);
});

test('a retryable failure after partial output completes the broken item as interrupted and retries', async () => {
  const model = await server({ script: [{ type: 'disconnect', after: ['par', 'tial'] }, { type: 'text', text: 'whole' }] });
  const run = startAttempt(pool, makeStart(model));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'whole');
  assertProtocol(run.messages, 1);
  const texts = itemsOfKind(run.messages, 'text_message').map((m) => m.item.content);
  assert.equal(texts, [{ text: 'partial', interrupted: true }, { text: 'whole' }]);
  assert.equal(done.history_append?.[1], { role: 'assistant', content: 'whole' });
});

test('a stalled stream times out (model_timeout_ms), is aborted and retried', async () => {
  const model = await server({ script: [{ type: 'hang' }, { type: 'text', text: 'late but fine' }] });
  const done = await startAttempt(pool, makeStart(model, { limits: { max_requests: null, model_timeout_ms: 100 } })).done;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'late but fine');
  assert.is(await model.requests[0]?.closed, 'aborted');
  assert.is(model.requests.length, 2);
});

test('a non-retryable model error fails the run with model_<code>', async () => {
  const model = await server({ script: [{ type: 'http_error', status: 401, message: 'bad key' }] });
  const done = await startAttempt(pool, makeStart(model)).done;
  assert.is(done.outcome, 'failed');
  assert.is(done.failure?.code, 'model_unauthenticated');
  assert.is(model.requests.length, 1);
});

test('cancel mid-stream aborts the model request and answers done cancelled', async () => {
  const model = await server({ script: [{ type: 'hang', after: ['thinking'] }] });
  const run = startAttempt(pool, makeStart(model));
  await run.waitFor((m) => m.type === 'item.delta');
  run.send({ type: 'cancel' });
  const done = await run.done;
  assert.is(done.outcome, 'cancelled');
  assert.is(await model.requests[0]?.closed, 'aborted');
  // What the stream carried (the input, the broken-off answer) is committed with the end.
  assert.is(checkpoints(run.messages).length, 1);
  assert.is(checkpoints(run.messages)[0]!.next_ordinal, 3);
  assert.equal(itemsOfKind(run.messages, 'text_message')[0]?.item.content, { text: 'thinking', interrupted: true });
  assertProtocol(run.messages, 1);
});

test('drain finishes the current step, checkpoints it and hands off', async () => {
  const model = await server({
    token_delay_ms: 15,
    script: [{ type: 'tool_calls', text: 'Adding.', calls: [{ id: 'call_a', name: 'add', arguments: '{"numbers":[2,3]}', pieces: 4 }] }, { type: 'text', text: 'never' }],
  });
  const start = makeStart(model, { config: { toolsets: { utilities: { enabled: true } } } });
  const run = startAttempt(pool, start);
  await run.waitFor((m) => m.type === 'item.delta');
  run.send({ type: 'drain' });
  const done = await run.done;
  assert.is(done.outcome, 'handoff');
  assert.is(model.requests.length, 1, 'no further model request after the drain');
  assert.is(run.messages[run.messages.length - 2]?.type, 'checkpoint', 'the step is committed before the handoff');
  assert.is(itemsOfKind(run.messages, 'tool_call')[0]?.item.content.arguments, '{"numbers":[2,3]}');
  assertProtocol(run.messages, 1);
});

test('a new attempt continues from the last checkpoint without re-emitting committed items', async () => {
  const model = await server({
    script: [{ type: 'tool_calls', calls: [{ id: 'call_a', name: 'add', arguments: '{"numbers":[2,3]}' }] }, { type: 'text', text: 'The sum is 5.' }],
  });
  // Attempt 1 stops deterministically after the tool step: its one allowed request is spent.
  const start = makeStart(model, { config: { toolsets: { utilities: { enabled: true } } }, limits: { max_requests: 1, model_timeout_ms: 10_000 } });
  const first = startAttempt(pool, start);
  assert.is((await first.done).failure?.code, 'max_requests_exceeded');
  const last = checkpoints(first.messages).at(-1)!;
  assert.is(last.seq, 2);
  const second = startAttempt(pool, continueFrom(start, last, { limits: { max_requests: 2, model_timeout_ms: 10_000 } }));
  const done = await second.done;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'The sum is 5.');
  assertProtocol(second.messages, last.next_ordinal, last.seq + 1);
  assert.equal(
    completedItems(second.messages).map((m) => m.item.kind),
    ['text_message'],
    'only the new answer is emitted',
  );
  assert.is(done.usage.requests, 2, 'usage continues from the checkpoint');
  assert.equal(
    model.requests[1]?.body.messages.map((m: { role: string }) => m.role),
    ['user', 'assistant', 'tool'],
  );
  assert.equal(done.history_append?.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
});

test('max_usage.requests stops the run before the request that would exceed it', async () => {
  const model = await server({ script: [{ type: 'tool_calls', calls: [{ name: 'echo', arguments: '{"text":"x"}' }] }] });
  const start = makeStart(model, { config: { toolsets: { utilities: { enabled: true } } }, limits: { max_requests: 1, model_timeout_ms: 10_000 } });
  const run = startAttempt(pool, start);
  const done = await run.done;
  assert.is(done.outcome, 'failed');
  assert.is(done.failure?.code, 'max_requests_exceeded');
  assert.is(model.requests.length, 1);
  assert.is(done.usage.requests, 1);
  assert.is(itemsOfKind(run.messages, 'tool_result').length, 1, 'the tool step itself finished');
});

test('steer entries join before the next model request and are reported by the next checkpoint', async () => {
  const model = await server({
    token_delay_ms: 10,
    script: [{ type: 'tool_calls', calls: [{ id: 'call_e', name: 'echo', arguments: '{"text":"hi"}', pieces: 4 }] }, { type: 'text', text: 'ok' }],
  });
  const run = startAttempt(pool, makeStart(model, { config: { toolsets: { utilities: { enabled: true } } } }));
  await run.waitFor((m) => m.type === 'item.started');
  const steer = { id: 'ent_7', content: [{ type: 'text', text: 'Also say bye.' }] };
  run.send({ type: 'steer', entries: [steer] });
  run.send({ type: 'steer', entries: [steer] }); // delivered twice: joins once
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  const second = model.requests[1]?.body.messages as Array<{ role: string; content: unknown }>;
  assert.equal(second.map((m) => m.role), ['user', 'assistant', 'tool', 'user']);
  assert.equal(second[3]?.content, [{ type: 'text', text: 'Also say bye.' }]);
  const steerItems = itemsOfKind(run.messages, 'user_message').filter((m) => m.item.content.entry_id === 'ent_7');
  assert.is(steerItems.length, 1);
  const reporting = checkpoints(run.messages).filter((c) => c.incorporated_entry_ids.length > 0);
  assert.equal(reporting.map((c) => c.incorporated_entry_ids), [['ent_7']]);
  assert.ok(reporting[0]!.next_ordinal > steerItems[0]!.ordinal, 'the checkpoint commits the steer item');
  assert.equal(decodeState(checkpoints(run.messages).at(-1)!).incorporated_steer_ids, ['ent_7']);
  assertProtocol(run.messages, 1);
});

test('an unknown model API or invalid configuration fails before any item', async () => {
  const model = await server({});
  const start = makeStart(model);
  start.model.api = 'carrier-pigeon';
  const bad = startAttempt(pool, start);
  assert.is((await bad.done).failure?.code, 'model_unsupported_api');
  const invalid = startAttempt(pool, makeStart(model, { config: { retries: { output: 'many' } } }));
  assert.is((await invalid.done).failure?.code, 'invalid_config');
  assert.is(invalid.messages.length, 1);
  assert.is(model.requests.length, 0);
});

test('the task module graph holds only the attempt, the model adapters, the web clients and the HTTP memory clients (no pg, Redis or S3)', () => {
  const root = resolve(fileURLToPath(new URL('../../../../', import.meta.url)));
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
      const spec = match[1]!;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  };
  visit(resolve(root, 'actors/attempt/attempt.task.ts'));
  // runtime/providers/memory holds the Mem0 REST client the attempt calls itself (no database);
  // runtime/providers/connector the MCP client (its host-only oauth folder is not reached).
  const inside = ['actors/attempt/', 'runtime/providers/model-adapters/', 'runtime/providers/web/', 'runtime/providers/endpoint-policy.ts', 'runtime/providers/memory/', 'runtime/providers/read-capped-body.ts'];
  const outside = [...files].map((f) => relative(root, f)).filter((f) => !inside.some((prefix) => f.startsWith(prefix)) && !/^runtime\/providers\/connector\/[^/]+$/.test(f));
  assert.equal(outside, []);
  assert.equal([...packages].sort(), [
    '@modelcontextprotocol/sdk/client/auth.js',
    '@modelcontextprotocol/sdk/client/index.js',
    '@modelcontextprotocol/sdk/client/streamableHttp.js',
    '@modelcontextprotocol/sdk/types.js',
    '@sinclair/typebox',
    '@sinclair/typebox/compiler',
    '@sinclair/typebox/value',
    'ajv/dist/2020.js',
    'html-to-text',
    'js-tiktoken/lite',
    'msgpackr',
  ]);
});

test.run();
