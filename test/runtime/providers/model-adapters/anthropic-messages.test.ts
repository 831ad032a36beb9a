import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { streamModel, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { addCommonCases, assertContract, textOf } from './fixtures/protocol-cases.js';
import { collect, readFixture, respondJson, startWireServer, streamFixture } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/anthropic-messages');
const KEY = 'sk-ant-api03-test-0123456789';
const endpoint = (url: string) => ({ base_url: url, api_key: KEY });
const request: ModelRequest = {
  model: 'claude-sonnet-4-5',
  instructions: 'Be brief.',
  messages: [
    { role: 'user', content: 'Weather in SF and NYC?' },
    {
      role: 'assistant',
      content: 'Checking both.',
      tool_calls: [
        { id: 'toolu_1', name: 'get_weather', arguments: '{"location":"SF"}' },
        { id: 'toolu_2', name: 'get_weather', arguments: '{"location":"NYC"}' },
      ],
    },
    { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
    { role: 'tool', tool_call_id: 'toolu_2', content: '25C' },
  ],
  tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }],
  tool_choice: 'required',
  settings: { temperature: 0.5, stop: 'END', thinking: { type: 'enabled', budget_tokens: 1024 } },
};

test('streams thinking as reasoning and text, then usage with cache reads, then finish `stop`', async () => {
  const server = await startWireServer([streamFixture(readFixture('anthropic-text.sse'))]);
  try {
    const events = await collect(streamModel('anthropic-messages', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events[0], { type: 'reasoning_delta', text: 'The user greets me.' });
    assert.is(textOf(events), 'Hello!');
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 35, output_tokens: 15, cached_input_tokens: 10 },
      { type: 'finish', reason: 'stop', vendor_reason: 'end_turn' },
    ]);
  } finally {
    await server.close();
  }
});

test('sends the Messages body: system, merged tool results, tool_use history, tools, headers', async () => {
  const server = await startWireServer([streamFixture(readFixture('anthropic-text.sse'))]);
  try {
    await collect(streamModel('anthropic-messages', endpoint(server.url), request));
    const req = server.requests[0]!;
    assert.is(req.url, '/v1/messages');
    assert.is(req.headers['x-api-key'], KEY);
    assert.is(req.headers['anthropic-version'], '2023-06-01');
    assert.is(req.body.system, 'Be brief.');
    assert.is(req.body.max_tokens, 4096);
    assert.equal(req.body.stop_sequences, ['END']);
    assert.equal(req.body.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.is(req.body.messages.length, 3, 'the two tool results share one user message');
    assert.equal(req.body.messages[1].content[1], { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'SF' } });
    assert.equal(req.body.messages[2], {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: '25C' },
      ],
    });
    assert.equal(req.body.tool_choice, { type: 'any' });
    assert.is(req.body.tools[0].input_schema.type, 'object');
  } finally {
    await server.close();
  }
});

test('reassembles a tool_use block from input_json_delta fragments (documented example)', async () => {
  const server = await startWireServer([streamFixture(readFixture('anthropic-tools.sse'))]);
  try {
    const events = await collect(streamModel('anthropic-messages', endpoint(server.url), request));
    assertContract(events);
    assert.is(textOf(events), "Okay, let's check the weather for San Francisco, CA:");
    assert.equal(events.find((e) => e.type === 'tool_call_start'), { type: 'tool_call_start', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' });
    assert.equal(events.find((e) => e.type === 'tool_call_end'), {
      type: 'tool_call_end',
      index: 0,
      id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      name: 'get_weather',
      arguments: '{"location": "San Francisco, CA", "unit": "fahrenheit"}',
    });
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 472, output_tokens: 89 },
      { type: 'finish', reason: 'tool_calls', vendor_reason: 'tool_use' },
    ]);
  } finally {
    await server.close();
  }
});

test('an `error` event (overloaded_error) mid-stream ends the stream without retry after output', async () => {
  const server = await startWireServer([streamFixture(readFixture('anthropic-error.sse'))]);
  try {
    const events = await collect(streamModel('anthropic-messages', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.equal(events, [
      { type: 'text_delta', text: 'Partial' },
      { type: 'error', code: 'upstream_unavailable', message: 'Overloaded', retryable: true },
    ]);
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('an `error` event before any output is retried', async () => {
  const early = 'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
  const server = await startWireServer([streamFixture(early), streamFixture(readFixture('anthropic-text.sse'))]);
  try {
    const events = await collect(streamModel('anthropic-messages', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.is(server.requests.length, 2);
    assert.is(events[events.length - 1]?.type, 'finish');
  } finally {
    await server.close();
  }
});

addCommonCases(test, {
  api: 'anthropic-messages',
  endpoint,
  request,
  textBody: readFixture('anthropic-text.sse'),
  contentType: 'text/event-stream',
  expectedText: 'Hello!',
  partialBody: readFixture('anthropic-text.sse').split('\n\n').slice(0, 9).join('\n\n') + '\n\n',
  rateLimited: respondJson(
    429,
    { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } },
    { 'retry-after': '1' },
  ),
  expectedRetryMs: 1000,
  secret: KEY,
});

test.run();
