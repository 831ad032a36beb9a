import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DiscoveryError, listVendorModels } from '../../../runtime/providers/index.js';
import { KEY, json, modelType, rejection, vendor } from './fake-vendor.js';

// How listings fail: typed {code, message} errors that never carry the credential.
const test = suite('runtime/providers/discovery (failures)');

test('types without a listing (bedrock, vertex, chatgpt login) fail with unsupported and make no request', async () => {
  for (const type of ['bedrock', 'google-vertex', 'openai-chatgpt']) {
    const error = await rejection(listVendorModels(modelType(type), { api_key: KEY, config: { region: 'us-east-1' } }));
    assert.is(error.code, 'unsupported', type);
    assert.equal(error.toJSON(), { code: 'unsupported', message: error.message });
  }
});

test('401 and 403 are unauthenticated, and the message never carries the key even when the vendor echoes it', async () => {
  const v = await vendor((req, res) =>
    json(res, req.path.includes('forbidden') ? 403 : 401, {
      error: { message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', code: 'invalid_api_key' },
    }),
  );
  try {
    const e401 = await rejection(listVendorModels('openai-compatible', { base_url: v.base, api_key: KEY }));
    assert.is(e401.code, 'unauthenticated');
    assert.match(e401.message, /401/);
    assert.not.ok(e401.message.includes(KEY));
    const e403 = await rejection(listVendorModels('anthropic', { base_url: `${v.base}/forbidden`, api_key: KEY }));
    assert.is(e403.code, 'unauthenticated');
    assert.not.ok(JSON.stringify(e403.toJSON()).includes(KEY));
  } finally {
    await v.close();
  }
});

test('5xx and 429 are upstream_unavailable with the vendor text redacted; garbage is protocol_error', async () => {
  const v = await vendor((req, res) => {
    if (req.path.startsWith('/busy')) return json(res, 429, { error: { message: 'Rate limit reached' } });
    if (req.path.startsWith('/html')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>login</html>');
      return;
    }
    if (req.path.startsWith('/shape')) return json(res, 200, { models: 'nope' });
    json(res, 503, { error: { message: `backend down for key ${KEY} and header secret-header-value` } });
  });
  try {
    const down = await rejection(listVendorModels('openai-compatible', { base_url: v.base, api_key: KEY, headers: { 'x-secret': 'secret-header-value' } }));
    assert.is(down.code, 'upstream_unavailable');
    assert.match(down.message, /503/);
    assert.match(down.message, /backend down/);
    assert.not.ok(down.message.includes(KEY));
    assert.not.ok(down.message.includes('secret-header-value'));
    assert.is((await rejection(listVendorModels('cohere', { base_url: `${v.base}/busy`, api_key: KEY }))).code, 'upstream_unavailable');
    assert.is((await rejection(listVendorModels('gemini', { base_url: `${v.base}/html`, api_key: KEY }))).code, 'protocol_error');
    assert.is((await rejection(listVendorModels('gemini', { base_url: `${v.base}/shape`, api_key: KEY }))).code, 'protocol_error');
  } finally {
    await v.close();
  }
});

test('a redirect is refused, not followed, so vendor auth headers stay with the vendor', async () => {
  const v = await vendor((req, res) => {
    if (req.path === '/elsewhere/v1/models') return json(res, 200, { data: [{ id: 'gpt-4o' }] });
    res.writeHead(302, { location: '/elsewhere/v1/models' });
    res.end();
  });
  try {
    const error = await rejection(listVendorModels('anthropic', { base_url: v.base, api_key: KEY }));
    assert.is(error.code, 'protocol_error');
    assert.is(v.seen.length, 1);
  } finally {
    await v.close();
  }
});

test('an unreachable endpoint and a silent one are upstream_unavailable', async () => {
  const closed = await vendor((_req, res) => json(res, 200, {}));
  const base = closed.base;
  await closed.close();
  const refused = await rejection(listVendorModels('ollama', { base_url: base }));
  assert.is(refused.code, 'upstream_unavailable');

  const silent = await vendor(() => undefined);
  try {
    const started = Date.now();
    const timedOut = await rejection(listVendorModels('openai-compatible', { base_url: silent.base, api_key: KEY }, { timeout_ms: 200 }));
    assert.is(timedOut.code, 'upstream_unavailable');
    assert.match(timedOut.message, /200 ms/);
    assert.ok(Date.now() - started < 5_000);
  } finally {
    await silent.close();
  }
});

test('uses an injected fetch and honours the caller signal', async () => {
  const calls: string[] = [];
  const fakeFetch: typeof fetch = async (input) => {
    calls.push(String(input));
    return new Response(JSON.stringify({ object: 'list', data: [{ id: 'deepseek-chat', object: 'model', owned_by: 'deepseek' }] }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
  const models = await listVendorModels(modelType('deepseek'), { api_key: KEY }, { fetch: fakeFetch });
  assert.equal(calls, ['https://api.deepseek.com/models'], 'the type default base URL applies');
  assert.is(models[0]?.characteristics.context_window_tokens, 131_072);

  const controller = new AbortController();
  controller.abort(new Error('caller gave up'));
  try {
    await listVendorModels('openai-compatible', { base_url: 'https://unused.example' }, { signal: controller.signal });
    assert.unreachable('should have thrown');
  } catch (error) {
    assert.not.instance(error, DiscoveryError);
    assert.match(String(error), /caller gave up/);
  }
});

test.run();
