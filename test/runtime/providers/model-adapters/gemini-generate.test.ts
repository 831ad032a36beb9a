import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { streamModel, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { addCommonCases, assertContract, textOf } from './fixtures/protocol-cases.js';
import { collect, readFixture, respondJson, startWireServer, streamFixture } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/gemini-generate');
const KEY = 'AIzaSyTest0123456789abcdef';
const endpoint = (url: string) => ({ base_url: url, api_key: KEY });
const request: ModelRequest = {
  model: 'gemini-2.5-flash',
  instructions: 'Be brief.',
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'fc-1', name: 'get_weather', arguments: '{"location":"Paris"}' }] },
    { role: 'tool', tool_call_id: 'fc-1', name: 'get_weather', content: '{"temp":18}' },
    { role: 'user', content: 'Thanks' },
  ],
  tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }],
  tool_choice: 'auto',
  settings: { temperature: 0.1, max_tokens: 200, safetySettings: [] },
};

test('streams thought parts as reasoning and text parts as text, then cumulative usage and finish `stop`', async () => {
  const server = await startWireServer([streamFixture(readFixture('gemini-text.sse'))]);
  try {
    const events = await collect(streamModel('gemini-generate', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events[0], { type: 'reasoning_delta', text: 'Thinking about cats.' });
    assert.is(textOf(events), 'Once upon a time, a cat sat.');
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 8, output_tokens: 15, reasoning_tokens: 5, total_tokens: 23 },
      { type: 'finish', reason: 'stop', vendor_reason: 'STOP' },
    ]);
  } finally {
    await server.close();
  }
});

test('sends contents, systemInstruction, functionDeclarations, toolConfig and generationConfig', async () => {
  const server = await startWireServer([streamFixture(readFixture('gemini-text.sse'))]);
  try {
    await collect(streamModel('gemini-generate', endpoint(server.url), request));
    const req = server.requests[0]!;
    assert.is(req.url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.is(req.headers['x-goog-api-key'], KEY);
    assert.equal(req.body.systemInstruction, { parts: [{ text: 'Be brief.' }] });
    assert.equal(req.body.generationConfig, { temperature: 0.1, maxOutputTokens: 200 });
    assert.equal(req.body.safetySettings, []);
    assert.equal(req.body.contents[1], { role: 'model', parts: [{ functionCall: { id: 'fc-1', name: 'get_weather', args: { location: 'Paris' } } }] });
    assert.equal(req.body.contents[2], {
      role: 'user',
      parts: [{ functionResponse: { id: 'fc-1', name: 'get_weather', response: { temp: 18 } } }, { text: 'Thanks' }],
    });
    assert.is(req.body.tools[0].functionDeclarations[0].name, 'get_weather');
    assert.equal(req.body.toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
  } finally {
    await server.close();
  }
});

test('function calls arriving in separate chunks become numbered tool calls with full arguments', async () => {
  const server = await startWireServer([streamFixture(readFixture('gemini-tools.sse'))]);
  try {
    const events = await collect(streamModel('gemini-generate', endpoint(server.url), request));
    assertContract(events);
    const ends = events.filter((e) => e.type === 'tool_call_end');
    assert.equal(ends, [
      { type: 'tool_call_end', index: 0, id: 'call_0', name: 'get_weather', arguments: '{"location":"Paris","unit":"celsius"}' },
      { type: 'tool_call_end', index: 1, id: 'fc-2', name: 'get_time', arguments: '{"tz":"CET"}' },
    ]);
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 50, output_tokens: 20, total_tokens: 70 },
      { type: 'finish', reason: 'tool_calls', vendor_reason: 'STOP' },
    ]);
  } finally {
    await server.close();
  }
});

test('an error object mid-stream ends the stream with that error and no retry after output', async () => {
  const server = await startWireServer([streamFixture(readFixture('gemini-error.sse'))]);
  try {
    const events = await collect(streamModel('gemini-generate', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.equal(events, [
      { type: 'text_delta', text: 'Partial' },
      { type: 'error', code: 'upstream_unavailable', message: 'The model is overloaded. Please try again later.', retryable: true },
    ]);
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('a prompt blocked by safety finishes with `content_filter`', async () => {
  const body = 'data: {"promptFeedback": {"blockReason": "SAFETY"},"usageMetadata": {"promptTokenCount": 7,"totalTokenCount": 7}}\r\n\r\n';
  const server = await startWireServer([streamFixture(body)]);
  try {
    const events = await collect(streamModel('gemini-generate', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events[events.length - 1], { type: 'finish', reason: 'content_filter', vendor_reason: 'SAFETY' });
  } finally {
    await server.close();
  }
});

addCommonCases(test, {
  api: 'gemini-generate',
  endpoint,
  request,
  textBody: readFixture('gemini-text.sse'),
  contentType: 'text/event-stream',
  expectedText: 'Once upon a time, a cat sat.',
  partialBody: readFixture('gemini-text.sse').split('\r\n\r\n').slice(0, 2).join('\r\n\r\n') + '\r\n\r\n',
  // Gemini puts its retry hint in the error body (google.rpc.RetryInfo), not in a header.
  rateLimited: respondJson(429, {
    error: {
      code: 429,
      message: 'You exceeded your current quota.',
      status: 'RESOURCE_EXHAUSTED',
      details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.15s' }],
    },
  }),
  expectedRetryMs: 150,
  secret: KEY,
});

test.run();
