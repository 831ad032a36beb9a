import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MODEL_APIS, isModelApi, streamModel, wireProtocol, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { MODEL_APIS as REGISTRY_MODEL_APIS } from '../../../../runtime/providers/registry/index.js';
import { hangAfter, readFixture, startWireServer } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/index');
const request: ModelRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

test('has one adapter for every model API the provider registry declares', () => {
  assert.equal([...MODEL_APIS], [...REGISTRY_MODEL_APIS]);
  for (const api of MODEL_APIS) {
    const protocol = wireProtocol(api);
    assert.type(protocol.prepare, 'function');
    assert.type(protocol.decode, 'function');
  }
  assert.ok(isModelApi('cohere-chat'));
  assert.not.ok(isModelApi('openai-completions'));
});

test('a consumer that stops iterating early closes the vendor connection', async () => {
  const partial = readFixture('openai-chat-text.sse').split('\n\n').slice(0, 2).join('\n\n') + '\n\n';
  const server = await startWireServer([hangAfter(partial)]);
  try {
    for await (const e of streamModel('openai-chat', { base_url: server.url }, request)) {
      if (e.type === 'text_delta') break;
    }
    assert.is(await server.requests[0]?.closed, 'aborted');
  } finally {
    await server.close();
  }
});

test('an already-aborted signal yields `cancelled` without calling the vendor', async () => {
  const server = await startWireServer([hangAfter('')]);
  try {
    const events = [];
    for await (const e of streamModel('openai-chat', { base_url: server.url }, request, { signal: AbortSignal.abort() })) events.push(e);
    assert.equal(events, [{ type: 'error', code: 'cancelled', message: 'the model call was cancelled', retryable: false }]);
    assert.is(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test('an unreachable endpoint becomes a retryable `upstream_unavailable` error', async () => {
  const server = await startWireServer([hangAfter('')]);
  const url = server.url;
  await server.close();
  const events = [];
  for await (const e of streamModel('openai-chat', { base_url: url }, request, { max_retries: 1, retry_base_delay_ms: 5 })) events.push(e);
  assert.is(events.length, 1);
  assert.ok(events[0]?.type === 'error' && events[0].code === 'upstream_unavailable' && events[0].retryable, JSON.stringify(events[0]));
});

test.run();
