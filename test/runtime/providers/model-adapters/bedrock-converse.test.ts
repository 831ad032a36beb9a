import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createHmac } from 'node:crypto';
import { streamModel, type ModelRequest } from '../../../../runtime/providers/model-adapters/index.js';
import { encodeEventStreamMessage } from '../../../../runtime/providers/model-adapters/aws-event-stream.js';
import { addCommonCases, assertContract, textOf } from './fixtures/protocol-cases.js';
import { collect, readFixture, respondJson, startWireServer, streamFixture, type WireHandler, type WireRequest } from './fixtures/wire-server.js';

const test = suite('runtime/providers/model-adapters/bedrock-converse');
const EVENT_STREAM = 'application/vnd.amazon.eventstream';
const AWS = {
  region: 'us-west-2',
  access_key_id: 'AKIDEXAMPLE',
  secret_access_key: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  session_token: 'IQoJb3JpZ2luX2VjEXAMPLETOKEN',
};
const endpoint = (url: string) => ({ base_url: url, aws: AWS });
// The ':' in the model id must be percent-encoded in the URL and encoded again for signing.
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const request: ModelRequest = {
  model: MODEL,
  instructions: 'Be brief.',
  messages: [
    { role: 'user', content: 'Top song on WZPZ?' },
    { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'tooluse_1', name: 'top_song', arguments: '{"sign":"WZPZ"}' }] },
    { role: 'tool', tool_call_id: 'tooluse_1', content: 'Elemental Hotel' },
  ],
  tools: [{ name: 'top_song', description: 'Top song', parameters: { type: 'object', properties: { sign: { type: 'string' } } } }],
  tool_choice: 'required',
  settings: { max_tokens: 300, temperature: 0.3, additionalModelRequestFields: { top_k: 5 } },
};

/** Fixture lines → event-stream frames, as Bedrock sends them. */
function frames(fixture: string, count = Infinity): Buffer {
  const lines = readFixture(fixture).split('\n').filter((l) => l.trim() !== '').slice(0, count);
  return Buffer.concat(
    lines.map((line) => {
      const m = JSON.parse(line) as { event?: string; exception?: string; payload: unknown };
      const headers: Record<string, string> = m.exception
        ? { ':exception-type': m.exception, ':content-type': 'application/json', ':message-type': 'exception' }
        : { ':event-type': m.event ?? '', ':content-type': 'application/json', ':message-type': 'event' };
      return encodeEventStreamMessage(headers, JSON.stringify(m.payload));
    }),
  );
}

/**
 * Independent SigV4 check, as AWS performs it: rebuild the canonical request from what
 * arrived on the wire and compare signatures. Answers 403 like AWS when they differ.
 */
function verifySigV4(req: WireRequest): string | undefined {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
    String(req.headers.authorization ?? ''),
  );
  if (!auth) return 'malformed Authorization header';
  const [, akid, date, region, service, signed, signature] = auth as unknown as string[];
  if (akid !== AWS.access_key_id || region !== AWS.region || service !== 'bedrock') return 'wrong credential scope';
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(date!)) return 'x-amz-date does not match the scope date';
  const names = signed!.split(';');
  for (const required of ['host', 'x-amz-date', 'content-type', 'x-amz-security-token']) if (!names.includes(required)) return `${required} is not signed`;
  const [path = '', query = ''] = req.url.split('?');
  const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonical = [
    req.method,
    path.split('/').map(rfc3986).join('/'),
    query,
    names.map((n) => `${n}:${String(req.headers[n] ?? '').trim()}\n`).join(''),
    signed,
    createHash('sha256').update(req.rawBody).digest('hex'),
  ].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, `${date}/${region}/${service}/aws4_request`, createHash('sha256').update(canonical).digest('hex')].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${AWS.secret_access_key}`).update(date!).digest();
  for (const part of [region!, service!, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  const expected = createHmac('sha256', key).update(toSign).digest('hex');
  return expected === signature ? undefined : 'signature mismatch';
}

function signed(handler: WireHandler): WireHandler {
  return (req, res) => {
    const problem = verifySigV4(req);
    if (problem === undefined) return handler(req, res);
    res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException' });
    res.end(JSON.stringify({ message: `The request signature we calculated does not match the signature you provided (${problem})` }));
  };
}

test('streams reasoning and text frames, then usage from metadata, then finish `stop`; the SigV4 signature verifies', async () => {
  const server = await startWireServer([signed(streamFixture(frames('bedrock-text.jsonl'), EVENT_STREAM))]);
  try {
    const events = await collect(streamModel('bedrock-converse', endpoint(server.url), request));
    assertContract(events);
    assert.equal(events[0], { type: 'reasoning_delta', text: 'Simple greeting.' });
    assert.is(textOf(events), 'Hello from Bedrock');
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 12, output_tokens: 9, cached_input_tokens: 3, total_tokens: 21 },
      { type: 'finish', reason: 'stop', vendor_reason: 'end_turn' },
    ]);
    const req = server.requests[0]!;
    assert.is(req.url, '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream');
    assert.is(req.headers['x-amz-security-token'], AWS.session_token);
  } finally {
    await server.close();
  }
});

test('sends the Converse body: system, merged toolResult, toolUse history, toolConfig, inferenceConfig', async () => {
  const server = await startWireServer([signed(streamFixture(frames('bedrock-text.jsonl'), EVENT_STREAM))]);
  try {
    await collect(streamModel('bedrock-converse', endpoint(server.url), request));
    const body = server.requests[0]!.body;
    assert.equal(body.system, [{ text: 'Be brief.' }]);
    assert.equal(body.inferenceConfig, { maxTokens: 300, temperature: 0.3 });
    assert.equal(body.additionalModelRequestFields, { top_k: 5 });
    assert.equal(body.messages[1], {
      role: 'assistant',
      content: [{ text: 'Checking.' }, { toolUse: { toolUseId: 'tooluse_1', name: 'top_song', input: { sign: 'WZPZ' } } }],
    });
    assert.equal(body.messages[2], { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'Elemental Hotel' }] } }] });
    assert.equal(body.toolConfig.toolChoice, { any: {} });
    assert.equal(body.toolConfig.tools[0].toolSpec.inputSchema.json.type, 'object');
  } finally {
    await server.close();
  }
});

test('reassembles toolUse input fragments into one tool call', async () => {
  const server = await startWireServer([signed(streamFixture(frames('bedrock-tools.jsonl'), EVENT_STREAM))]);
  try {
    const events = await collect(streamModel('bedrock-converse', endpoint(server.url), request));
    assertContract(events);
    assert.is(textOf(events), 'Let me check.');
    assert.equal(
      events.filter((e) => e.type.startsWith('tool_call')),
      [
        { type: 'tool_call_start', index: 0, id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song' },
        { type: 'tool_call_delta', index: 0, arguments_delta: '{"sign": "W' },
        { type: 'tool_call_delta', index: 0, arguments_delta: 'ZPZ"}' },
        { type: 'tool_call_end', index: 0, id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song', arguments: '{"sign": "WZPZ"}' },
      ],
    );
    assert.equal(events.slice(-2), [
      { type: 'usage', input_tokens: 375, output_tokens: 56, total_tokens: 431 },
      { type: 'finish', reason: 'tool_calls', vendor_reason: 'tool_use' },
    ]);
  } finally {
    await server.close();
  }
});

test('an exception frame mid-stream (modelStreamErrorException) ends the stream, no retry after output', async () => {
  const server = await startWireServer([signed(streamFixture(frames('bedrock-error.jsonl'), EVENT_STREAM))]);
  try {
    const events = await collect(streamModel('bedrock-converse', endpoint(server.url), request, { retry_base_delay_ms: 5 }));
    assertContract(events);
    assert.equal(events, [
      { type: 'text_delta', text: 'Partial' },
      { type: 'error', code: 'upstream_unavailable', message: 'The model stream failed with an error.', retryable: true },
    ]);
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('a frame with a corrupted CRC ends the stream with `protocol_error`', async () => {
  const body = frames('bedrock-text.jsonl');
  body.writeUInt8(body.readUInt8(body.length - 1) ^ 0xff, body.length - 1);
  const server = await startWireServer([signed(streamFixture(body, EVENT_STREAM))]);
  try {
    const events = await collect(streamModel('bedrock-converse', endpoint(server.url), request));
    assertContract(events);
    const last = events[events.length - 1];
    assert.ok(last?.type === 'error' && last.code === 'protocol_error' && !last.retryable, JSON.stringify(last));
  } finally {
    await server.close();
  }
});

test('a wrong secret key is refused by the verifying server as `forbidden`', async () => {
  const server = await startWireServer([signed(streamFixture(frames('bedrock-text.jsonl'), EVENT_STREAM))]);
  try {
    const wrong = { base_url: server.url, aws: { ...AWS, secret_access_key: 'not-the-right-secret-key' } };
    const events = await collect(streamModel('bedrock-converse', wrong, request));
    const last = events[events.length - 1];
    assert.ok(last?.type === 'error' && last.code === 'forbidden' && last.status === 403, JSON.stringify(last));
    assert.not.ok(JSON.stringify(events).includes('not-the-right-secret-key'));
  } finally {
    await server.close();
  }
});

test('without AWS credentials a Bedrock API key is sent as a Bearer token', async () => {
  const server = await startWireServer([streamFixture(frames('bedrock-text.jsonl'), EVENT_STREAM)]);
  try {
    const events = await collect(streamModel('bedrock-converse', { base_url: server.url, api_key: 'ABSKbedrock-api-key' }, request));
    assertContract(events);
    assert.is(server.requests[0]!.headers.authorization, 'Bearer ABSKbedrock-api-key');
  } finally {
    await server.close();
  }
});

addCommonCases(test, {
  api: 'bedrock-converse',
  endpoint,
  request,
  textBody: frames('bedrock-text.jsonl'),
  contentType: EVENT_STREAM,
  expectedText: 'Hello from Bedrock',
  partialBody: frames('bedrock-text.jsonl', 4),
  // Bedrock sends no Retry-After: the default backoff (≥ 250 ms for the first retry) applies.
  rateLimited: respondJson(429, { message: 'Too many requests, please wait before trying again.' }, { 'x-amzn-errortype': 'ThrottlingException' }),
  expectedRetryMs: 250,
  secret: AWS.secret_access_key,
});

test.run();
