import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { streamModel, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { addCommonCases, assertContract, textOf } from './fixtures/protocol-cases.js';
import { collect, readFixture, respondJson, startWireServer, streamFixture } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/openai-responses');
const KEY = 'sk-test-responses-0123456789';
const endpoint = (url: string) => ({ base_url: `${url}/v1`, api_key: KEY });
const request: ModelRequest = {
  model: 'gpt-4.1',
  instructions: 'You are a helpful assistant.',
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' }] },
    { role: 'tool', tool_call_id: 'call_1', content: '18C' },
  ],
  tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }],
  tool_choice: 'required',
  settings: { max_tokens: 256, reasoning: { effort: 'low' } },
};

test('streams output_text deltas, then usage, then finish `stop`', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-responses-text.sse'))]);
  try {
    const events = await collect(streamModel('openai-responses', endpoint(server.url), request));
    assertContract(events);
    assert.is(textOf(events), 'Hi there!');
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 37, output_tokens: 11, cached_input_tokens: 0, reasoning_tokens: 0, total_tokens: 48 },
      { type: 'finish', reason: 'stop', vendor_reason: 'completed' },
    ]);
  } finally {
    await server.close();
  }
});

test('sends instructions, input items for tool history, function tools and mapped settings', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-responses-text.sse'))]);
  try {
    await collect(streamModel('openai-responses', endpoint(server.url), request));
    const req = server.requests[0]!;
    assert.is(req.url, '/v1/responses');
    assert.is(req.headers.authorization, `Bearer ${KEY}`);
    assert.is(req.body.instructions, 'You are a helpful assistant.');
    assert.is(req.body.max_output_tokens, 256);
    assert.equal(req.body.reasoning, { effort: 'low' });
    assert.equal(req.body.input, [
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '18C' },
    ]);
    assert.equal(req.body.tools, [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }]);
    assert.is(req.body.tool_choice, 'required');
  } finally {
    await server.close();
  }
});

test('reasoning summary, then a function call whose arguments arrive in fragments', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-responses-tools.sse'))]);
  try {
    const events = await collect(streamModel('openai-responses', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events, [
      { type: 'reasoning_delta', text: 'Need the weather.' },
      { type: 'tool_call_start', index: 0, id: 'call_abc', name: 'get_weather' },
      { type: 'tool_call_delta', index: 0, arguments_delta: '{"location":' },
      { type: 'tool_call_delta', index: 0, arguments_delta: ' "Paris"}' },
      { type: 'tool_call_end', index: 0, id: 'call_abc', name: 'get_weather', arguments: '{"location": "Paris"}' },
      { type: 'usage', input_tokens: 60, output_tokens: 40, cached_input_tokens: 32, reasoning_tokens: 22, total_tokens: 100 },
      { type: 'finish', reason: 'tool_calls', vendor_reason: 'completed' },
    ]);
  } finally {
    await server.close();
  }
});

test('response.failed mid-stream ends with the vendor error and is not retried after output', async () => {
  const server = await startWireServer([streamFixture(readFixture('openai-responses-error.sse'))]);
  try {
    const events = await collect(streamModel('openai-responses', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.equal(events[0], { type: 'text_delta', text: 'Partial' });
    assert.equal(events[1], {
      type: 'error',
      code: 'upstream_unavailable',
      message: 'The model failed to generate a response.',
      retryable: true,
    });
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('response.incomplete for max_output_tokens finishes with `length`', async () => {
  const body =
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Long"}\n\n' +
    'event: response.incomplete\ndata: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":16,"total_tokens":21}}}\n\n';
  const server = await startWireServer([streamFixture(body)]);
  try {
    const events = await collect(streamModel('openai-responses', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events[events.length - 1], { type: 'finish', reason: 'length', vendor_reason: 'max_output_tokens' });
  } finally {
    await server.close();
  }
});

addCommonCases(test, {
  api: 'openai-responses',
  endpoint,
  request,
  textBody: readFixture('openai-responses-text.sse'),
  contentType: 'text/event-stream',
  expectedText: 'Hi there!',
  partialBody: readFixture('openai-responses-text.sse').split('\n\n').slice(0, 5).join('\n\n') + '\n\n',
  rateLimited: respondJson(429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '100' }),
  expectedRetryMs: 100,
  secret: KEY,
});

test.run();
