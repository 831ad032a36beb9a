import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelScript, RecordedRequest } from '../../../bench/model-server.js';
import { requestsMentioning, send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

// A model or provider disabled while a run executes refuses that run's next model request with
// `disabled` (spec 2.2, 2.13 rule 4): the attempt asks its host for the model before every
// request after its first (host request model.resolve). Each run here makes two requests: the
// first answer is not valid output, so the run re-asks. The first response is held open by the
// model server until the test has made its change, so the change is known to fall between
// the two requests.

const test = suite('actors/run-engine/mid-run-disable');
let f: RunFixture;
let providerId: string;
const scripts = new Map<string, ModelScript[]>();

const newThread = async (): Promise<string> => (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id;
const requestsFor = (key: string): RecordedRequest[] => requestsMentioning(f, key);
const isReview = (r: RecordedRequest): boolean => JSON.stringify(r.body?.messages ?? []).includes('You review tool calls');

test.before(async () => {
  f = await startRunFixture({
    agentConfig: { output_spec: { name: 'answer', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } }, retries: { output: 2 } },
    script: (request) => {
      const first = (request.body?.messages as Array<{ role: string; content: unknown }>).find((m) => m.role === 'user');
      const queue = [...scripts.entries()].find(([k]) => JSON.stringify(first?.content ?? '').includes(k))?.[1];
      return queue?.shift();
    },
  });
  providerId = (await f.client.get('/api/v1/models/fast')).body.provider_id;
});
test.after(async () => {
  await f?.stop();
});

/**
 * Starts a run whose first response is held open; runs `change` once the first request is at
 * the model server, then lets the response finish and returns the sealed run.
 */
async function runWithChange(key: string, change: () => Promise<void>, options: { agentId?: string; first?: (hold: Promise<void>) => ModelScript; then?: ModelScript } = {}): Promise<any> {
  let release!: () => void;
  const hold = new Promise<void>((resolve) => (release = resolve));
  const first = options.first?.(hold) ?? { type: 'text', text: 'not json at all', hold };
  scripts.set(key, [first, options.then ?? { type: 'text', text: '{"answer":"fine"}' }]);
  const posted = await send(f, key, options.agentId ? { agent_id: options.agentId } : {}, await newThread());
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  await until(() => requestsFor(key).length, (n) => n === 1);
  try {
    await change();
  } finally {
    release();
  }
  return waitForRun(f, posted.body.run.id);
}

async function patchModel(body: Record<string, unknown>): Promise<void> {
  const model = await f.client.get('/api/v1/models/fast');
  const patched = await f.client.patch('/api/v1/models/fast', body, { 'if-match': model.headers.get('etag') ?? '' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
}

async function patchProvider(body: Record<string, unknown>): Promise<void> {
  const provider = await f.client.get(`/api/v1/model-providers/${providerId}`);
  const patched = await f.client.patch(`/api/v1/model-providers/${providerId}`, body, { 'if-match': provider.headers.get('etag') ?? '' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
}

test('a model disabled mid-run refuses the next request: the run fails with model_disabled and nothing more is sent', async () => {
  const run = await runWithChange('disable-model', () => patchModel({ enabled: false }));
  await patchModel({ enabled: true });
  assert.is(run.status, 'failed');
  assert.is(run.failure.code, 'model_disabled');
  assert.match(run.failure.message, /model fast is disabled/);
  assert.is(requestsFor('disable-model').length, 1, 'the second request never reached the vendor');
  const items = (await f.client.get(`/api/v1/runs/${run.id}/items`)).body.items as Array<{ kind: string; content: Record<string, unknown> }>;
  assert.ok(items.some((i) => i.kind === 'text_message' && i.content.text === 'not json at all'), 'the first response stays committed');
});

test('a provider disabled mid-run refuses the next request the same way', async () => {
  const run = await runWithChange('disable-provider', () => patchProvider({ enabled: false }));
  await patchProvider({ enabled: true });
  assert.is(run.status, 'failed');
  assert.is(run.failure.code, 'model_disabled');
  assert.match(run.failure.message, new RegExp(`provider ${providerId} of model fast is disabled`));
  assert.is(requestsFor('disable-provider').length, 1);
});

test('the check reads the current state: disabled and enabled again in between, the run goes on', async () => {
  const run = await runWithChange('flip', async () => {
    await patchModel({ enabled: false });
    await patchModel({ enabled: true });
  });
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  assert.equal(run.output, { answer: 'fine' });
  assert.is(requestsFor('flip').length, 2);
});

test('a credential replaced mid-run is used from the next request on', async () => {
  const run = await runWithChange('rotate', () => patchProvider({ credential: { api_key: 'rotated-key' } }));
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  const [first, second] = requestsFor('rotate');
  assert.is(first!.headers.authorization, 'Bearer test-key');
  assert.is(second!.headers.authorization, 'Bearer rotated-key');
});

async function reviewedAgent(reviewer: Record<string, unknown>): Promise<string> {
  const pick = { name: 'pick_file', description: 'Ask the client for a file', parameters_json_schema: { type: 'object', properties: {} } };
  const agent = await f.client.post('/api/v1/agents', { name: `reviewed-${Math.random().toString(36).slice(2)}`, config: { model: 'fast', reviewer: { on_error: 'deny', ...reviewer }, client_tools: [pick] } });
  assert.is(agent.status, 201, JSON.stringify(agent.body));
  return agent.body.id;
}
const pickCall = (hold: Promise<void>): ModelScript => ({ type: 'tool_calls', calls: [{ id: 'call_pick', name: 'pick_file', arguments: '{}' }], hold });

test('reviews are model requests too: the run\'s own model disabled mid-run fails the run before the review is sent', async () => {
  const agentId = await reviewedAgent({});
  const run = await runWithChange('review-own', () => patchModel({ enabled: false }), { agentId, first: pickCall });
  await patchModel({ enabled: true });
  assert.is(run.status, 'failed');
  assert.is(run.failure.code, 'model_disabled');
  assert.equal(requestsFor('review-own').filter(isReview), [], 'no review request was sent');
});

test('a reviewer model of its own disabled mid-run is unusable: the review follows on_error without a request', async () => {
  assert.is((await f.client.post('/api/v1/models', { key: 'judge', provider_id: providerId, model: 'mock-judge', api: 'openai-chat' })).status, 201);
  const agentId = await reviewedAgent({ model: 'judge' });
  const change = async () => {
    const judge = await f.client.get('/api/v1/models/judge');
    assert.is((await f.client.patch('/api/v1/models/judge', { enabled: false }, { 'if-match': judge.headers.get('etag') ?? '' })).status, 200);
  };
  const run = await runWithChange('review-judge', change, { agentId, first: pickCall, then: { type: 'text', text: 'could not pick' } });
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  assert.equal(requestsFor('review-judge').filter(isReview), []);
  const review = (await f.client.get(`/api/v1/runs/${run.id}/items`)).body.items.find((i: { kind: string }) => i.kind === 'review');
  assert.is(review.content.decision, 'denied');
  assert.match(review.content.error, /model judge is disabled/);
});

test.run();
