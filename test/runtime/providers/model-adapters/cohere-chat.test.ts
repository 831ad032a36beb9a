import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { streamModel, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { addCommonCases, assertContract, textOf } from './fixtures/protocol-cases.js';
import { collect, readFixture, respondJson, startWireServer, streamFixture } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/cohere-chat');
const KEY = 'co-test-key-0123456789';
const endpoint = (url: string) => ({ base_url: url, api_key: KEY });
const request: ModelRequest = {
  model: 'command-a-03-2025',
  instructions: 'Be brief.',
  messages: [
    { role: 'user', content: 'Weather in Toronto?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'get_weather', arguments: '{"location":"Toronto"}' }] },
    { role: 'tool', tool_call_id: 'c1', content: '-3C' },
  ],
  tools: [
    { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
    { name: 'get_time', description: 'Time', parameters: { type: 'object' } },
  ],
  tool_choice: { name: 'get_weather' },
  settings: { top_p: 0.9, max_tokens: 50 },
};

test('streams content-delta text, then tokens usage, then finish `stop`', async () => {
  const server = await startWireServer([streamFixture(readFixture('cohere-text.sse'))]);
  try {
    const events = await collect(streamModel('cohere-chat', endpoint(server.url), request));
    assertContract(events);
    assert.is(textOf(events), 'Hello world');
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 69, output_tokens: 2 },
      { type: 'finish', reason: 'stop', vendor_reason: 'COMPLETE' },
    ]);
  } finally {
    await server.close();
  }
});

test('sends the v2 chat body with system message, tool history, one forced tool and mapped settings', async () => {
  const server = await startWireServer([streamFixture(readFixture('cohere-text.sse'))]);
  try {
    await collect(streamModel('cohere-chat', endpoint(server.url), request));
    const req = server.requests[0]!;
    assert.is(req.url, '/v2/chat');
    assert.is(req.headers.authorization, `Bearer ${KEY}`);
    assert.is(req.body.p, 0.9);
    assert.is(req.body.max_tokens, 50);
    assert.equal(req.body.messages[0], { role: 'system', content: 'Be brief.' });
    assert.equal(req.body.messages[2], {
      role: 'assistant',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Toronto"}' } }],
    });
    assert.equal(req.body.messages[3], { role: 'tool', tool_call_id: 'c1', content: '-3C' });
    assert.equal(req.body.tools.map((t: { function: { name: string } }) => t.function.name), ['get_weather']);
    assert.is(req.body.tool_choice, 'REQUIRED');
  } finally {
    await server.close();
  }
});

test('tool plan becomes reasoning; tool-call fragments are reassembled', async () => {
  const server = await startWireServer([streamFixture(readFixture('cohere-tools.sse'))]);
  try {
    const events = await collect(streamModel('cohere-chat', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events.slice(0, 3), [
      { type: 'reasoning_delta', text: 'I will look up' },
      { type: 'reasoning_delta', text: ' the weather.' },
      { type: 'tool_call_start', index: 0, id: 'get_weather_nsz5zm3w56q3', name: 'get_weather' },
    ]);
    assert.equal(events.find((e) => e.type === 'tool_call_end'), {
      type: 'tool_call_end',
      index: 0,
      id: 'get_weather_nsz5zm3w56q3',
      name: 'get_weather',
      arguments: '{\n    "location": "Toronto"\n}',
    });
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 913, output_tokens: 73 },
      { type: 'finish', reason: 'tool_calls', vendor_reason: 'TOOL_CALL' },
    ]);
  } finally {
    await server.close();
  }
});

test('message-end with finish_reason ERROR mid-stream becomes an error, not retried after output', async () => {
  const server = await startWireServer([streamFixture(readFixture('cohere-error.sse'))]);
  try {
    const events = await collect(streamModel('cohere-chat', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.equal(events, [
      { type: 'text_delta', text: 'Partial' },
      { type: 'error', code: 'upstream_unavailable', message: 'internal server error, this has been reported to our developers', retryable: true },
    ]);
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

addCommonCases(test, {
  api: 'cohere-chat',
  endpoint,
  request,
  textBody: readFixture('cohere-text.sse'),
  contentType: 'text/event-stream',
  expectedText: 'Hello world',
  partialBody: readFixture('cohere-text.sse').split('\n\n').slice(0, 3).join('\n\n') + '\n\n',
  rateLimited: respondJson(429, { id: 'f1f6e7', message: 'You are using a Trial key, which is limited to 10 API calls / minute.' }, { 'retry-after': '1' }),
  expectedRetryMs: 1000,
  secret: KEY,
});

test.run();
