import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { streamModel, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { addCommonCases, assertContract, textOf } from './fixtures/protocol-cases.js';
import { collect, readFixture, respondJson, startWireServer, streamFixture } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/openai-chat');
const KEY = 'sk-test-0123456789abcdef';
const endpoint = (url: string) => ({ base_url: `${url}/v1`, api_key: KEY });
const request: ModelRequest = {
  model: 'gpt-4o-mini',
  instructions: 'Be brief.',
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' }] },
    { role: 'tool', tool_call_id: 'call_1', name: 'get_weather', content: '18C' },
    { role: 'user', content: [{ type: 'text', text: 'And this?' }, { type: 'image', media_type: 'image/png', data: 'iVBORw0KGgo=' }] },
  ],
  tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }],
  tool_choice: { name: 'get_weather' },
  settings: { temperature: 0.2, max_completion_tokens: 100 },
};

test('streams text, then usage, then finish `stop`, from the documented chunk stream', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-chat-text.sse'))]);
  try {
    const events = await collect(streamModel('openai-chat', endpoint(server.url), request));
    assertContract(events);
    assert.is(textOf(events), 'Hello! How can I help — ünïcode?');
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 9, output_tokens: 12, cached_input_tokens: 4, reasoning_tokens: 0, total_tokens: 21 },
      { type: 'finish', reason: 'stop', vendor_reason: 'stop' },
    ]);
  } finally {
    await server.close();
  }
});

test('sends the request as Chat Completions expects it', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-chat-text.sse'))]);
  try {
    await collect(streamModel('openai-chat', endpoint(server.url), request));
    const req = server.requests[0]!;
    assert.is(req.url, '/v1/chat/completions');
    assert.is(req.headers.authorization, `Bearer ${KEY}`);
    assert.is(req.body.stream, true);
    assert.equal(req.body.stream_options, { include_usage: true });
    assert.is(req.body.temperature, 0.2);
    assert.is(req.body.max_completion_tokens, 100);
    assert.equal(req.body.messages[0], { role: 'system', content: 'Be brief.' });
    assert.equal(req.body.messages[2], {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
    });
    assert.equal(req.body.messages[3], { role: 'tool', tool_call_id: 'call_1', content: '18C' });
    assert.equal(req.body.messages[4].content[1], { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } });
    assert.equal(req.body.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.is(req.body.tools[0].function.name, 'get_weather');
  } finally {
    await server.close();
  }
});

test('reassembles two parallel tool calls whose arguments are split across chunks', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-chat-tools.sse'))]);
  try {
    const events = await collect(streamModel('openai-chat', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events[0], { type: 'tool_call_start', index: 0, id: 'call_abc', name: 'get_weather' });
    assert.is(events.filter((e) => e.type === 'tool_call_delta' && e.index === 0).length, 3);
    const ends = events.filter((e) => e.type === 'tool_call_end');
    assert.equal(ends, [
      { type: 'tool_call_end', index: 0, id: 'call_abc', name: 'get_weather', arguments: '{"location": "Paris"}' },
      { type: 'tool_call_end', index: 1, id: 'call_def', name: 'get_time', arguments: '{"tz":"CET"}' },
    ]);
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 80, output_tokens: 35, total_tokens: 115 },
      { type: 'finish', reason: 'tool_calls', vendor_reason: 'tool_calls' },
    ]);
  } finally {
    await server.close();
  }
});

test('a mid-stream error after output ends the stream with that error and is not retried', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-chat-error.sse'))]);
  try {
    const events = await collect(streamModel('openai-chat', endpoint(server.url), request, { max_retries: 2, retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.equal(events[0], { type: 'text_delta', text: 'Partial' });
    const last = events[events.length - 1];
    assert.ok(last?.type === 'error' && last.code === 'upstream_unavailable' && last.retryable);
    assert.match(last.type === 'error' ? last.message : '', 'server had an error');
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('a connection dropped before any output is retried', async () => {
  const server = await startWireServer([(_req, res) => {
    res.socket?.destroy();
  }, streamFixture(readFixture('openai-chat-text.sse'))]);
  try {
    const events = await collect(streamModel('openai-chat', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.is(server.requests.length, 2);
    assert.is(events[events.length - 1]?.type, 'finish');
  } finally {
    await server.close();
  }
});

test('a stream cut after output without a finish chunk ends with a retryable error', async () => {
  const partial = readFixture('openai-chat-text.sse').split('\n\n').slice(0, 2).join('\n\n') + '\n\n';
  const server = await startWireServer([streamFixture(partial)]);
  try {
    const events = await collect(streamModel('openai-chat', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    const last = events[events.length - 1];
    assert.ok(last?.type === 'error' && last.code === 'upstream_unavailable' && last.retryable);
    assert.is(server.requests.length, 1, 'output was emitted, so no retry');
  } finally {
    await server.close();
  }
});

test('an invalid request is refused as `invalid_request` without calling the vendor', async () => {
  const server = await startWireServer([respondJson(500, {})]);
  try {
    const bad = { model: '', messages: [] } as ModelRequest;
    const events = await collect(streamModel('openai-chat', endpoint(server.url), bad));
    assert.is(events.length, 1);
    assert.ok(events[0]?.type === 'error' && events[0].code === 'invalid_request');
    assert.is(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

addCommonCases(test, {
  api: 'openai-chat',
  endpoint,
  request,
  textBody: readFixture('openai-chat-text.sse'),
  contentType: 'text/event-stream',
  expectedText: 'Hello! How can I help — ünïcode?',
  partialBody: readFixture('openai-chat-text.sse').split('\n\n').slice(0, 2).join('\n\n') + '\n\n',
  rateLimited: respondJson(
    429,
    { error: { message: 'Rate limit reached for gpt-4o-mini', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    { 'retry-after-ms': '120', 'retry-after': '1' },
  ),
  expectedRetryMs: 120,
  secret: KEY,
});

test.run();
