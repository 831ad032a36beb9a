import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelScript } from '../../../bench/model-server.js';
import pg from 'pg';
import { query } from '../../support/database.js';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/run-lifecycle');
let f: RunFixture;
// Scripts by the newest user message naming a script key (the thread's history holds earlier
// runs' inputs), so tests sharing the fixture don't interfere.
const scripts = new Map<string, ModelScript[]>();

test.before(async () => {
  f = await startRunFixture({
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } } },
    script: (request) => {
      const messages = (request.body?.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').reverse();
      for (const message of messages) {
        const text = JSON.stringify(message.content);
        const queue = [...scripts.entries()].find(([k]) => text.includes(k))?.[1];
        if (queue) return queue.shift();
      }
      return undefined;
    },
  });
});
test.after(async () => {
  await f?.stop();
});

test('a run streams text items and completes; items are committed with gap-free ordinals', async () => {
  scripts.set('hello-run', [{ type: 'text', text: ['Hel', 'lo ', 'there'] }]);
  const posted = await send(f, 'hello-run');
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  assert.is(posted.body.entry.position, 1);
  // The fixture is one `all` process with free slots: the POST's transaction claims the run
  // for the local worker (WorkerHost.reserve), so it answers with the run already running.
  assert.is(posted.body.run.status, 'running');
  assert.is(posted.body.run.attempts, 1);
  assert.ok(posted.body.run.current_attempt_id);
  assert.ok(posted.body.run.started_at);
  assert.is(posted.body.thread.current_run_id, posted.body.run.id);
  const run = await waitForRun(f, posted.body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  assert.is(run.output, 'Hello there');
  assert.is(run.attempts, 1);
  assert.ok(run.usage_at_seal);
  const items = await f.client.get(`/api/v1/runs/${run.id}/items`);
  assert.is(items.status, 200);
  const kinds = items.body.items.map((i: { kind: string }) => i.kind);
  assert.equal(items.body.items.map((i: { ordinal: number }) => i.ordinal), kinds.map((_: string, i: number) => i + 1));
  assert.ok(kinds.includes('user_message'));
  const text = items.body.items.find((i: { kind: string }) => i.kind === 'text_message');
  assert.is(text.content.text, 'Hello there');
  assert.is(text.state, 'completed');
  assert.is(items.body.complete, true);
  const entry = await f.client.get(`/api/v1/threads/${f.threadId}/inbox`);
  assert.is(entry.body.items[0].status, 'completed');
  const thread = await f.client.get(`/api/v1/threads/${f.threadId}`);
  assert.is(thread.body.current_run_id, null);
  assert.is(thread.body.last_run_id, run.id);
});

test('a tool loop with a server tool feeds the result back to the model', async () => {
  scripts.set('tool-run', [
    { type: 'tool_calls', calls: [{ id: 'call_1', name: 'add', arguments: '{"numbers":[2,3,4]}', pieces: 4 }] },
    { type: 'text', text: 'The sum is 9' },
  ]);
  const before = f.model.requests.length;
  const run = await waitForRun(f, (await send(f, 'tool-run')).body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  assert.is(run.output, 'The sum is 9');
  const second = f.model.requests.slice(before)[1]!.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>;
  const toolMessage = second.find((m) => m.role === 'tool');
  assert.ok(toolMessage, 'the tool result went back to the model');
  assert.is(toolMessage!.tool_call_id, 'call_1');
  assert.match(JSON.stringify(toolMessage!.content), /9/);
  const kinds = (await f.client.get(`/api/v1/runs/${run.id}/items`)).body.items.map((i: { kind: string }) => i.kind);
  assert.ok(kinds.includes('tool_call') && kinds.includes('tool_result'), kinds.join(','));
});

test('output_spec: an invalid answer is re-asked and the valid one becomes the output', async () => {
  scripts.set('spec-run', [
    { type: 'text', text: 'not json at all' },
    { type: 'text', text: '{"answer": 42}' },
  ]);
  const output_spec = { name: 'result', schema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false } };
  const run = await waitForRun(f, (await send(f, 'spec-run', { options: { overrides: { output_spec, retries: { output: 2 } } } })).body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  assert.equal(run.output, { answer: 42 });
});

test('max_usage.requests stops the run', async () => {
  scripts.set('limit-run', [
    { type: 'tool_calls', calls: [{ id: 'call_a', name: 'echo', arguments: '{"text":"x"}' }] },
    { type: 'text', text: 'never reached' },
  ]);
  const run = await waitForRun(f, (await send(f, 'limit-run', { options: { max_usage: { requests: 1 } } })).body.run.id);
  assert.is(run.status, 'failed');
  assert.is(run.failure.code, 'max_requests_exceeded');
});

test('a run that fails on its first model request keeps the items its stream carried', async () => {
  scripts.set('fail-first', [{ type: 'http_error', status: 400, message: 'no such thing' }]);
  const run = await waitForRun(f, (await send(f, 'fail-first')).body.run.id);
  assert.is(run.status, 'failed');
  const page = await f.client.get(`/api/v1/runs/${run.id}/items`);
  assert.equal(page.body.items.map((i: { kind: string }) => i.kind), ['user_message']);
  assert.match(JSON.stringify(page.body.items[0].content), /fail-first/);
  assert.is(page.body.complete, true);
});

test('cancel mid-stream stops the attempt at once, aborting the model request', async () => {
  scripts.set('hang-run', [{ type: 'hang', after: ['partial '] }]);
  const before = f.model.requests.length;
  const posted = await send(f, 'hang-run');
  await until(() => f.model.requests.length, (n) => n > before);
  await waitForRun(f, posted.body.run.id, ['running']);
  const cancelled = await f.client.post(`/api/v1/runs/${posted.body.run.id}/cancel`, undefined, { 'idempotency-key': `cancel-${posted.body.run.id}` });
  assert.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  const run = await waitForRun(f, posted.body.run.id);
  assert.is(run.status, 'cancelled');
  assert.is(await f.model.requests[before]!.closed, 'aborted');
  const again = await f.client.post(`/api/v1/runs/${run.id}/cancel`, undefined, { 'idempotency-key': `cancel-again-${run.id}` });
  assert.is(again.status, 409);
});

test('a pending entry is withdrawn with If-Match, leaving a tombstone with its request key', async () => {
  scripts.set('busy-run', [{ type: 'hang' }]);
  const busy = await send(f, 'busy-run');
  await waitForRun(f, busy.body.run.id, ['running']);
  const queued = await f.client.post(`/api/v1/threads/${f.threadId}/inbox`, { agent_id: f.agentId, payload: { content: [{ type: 'text', text: 'later' }] } }, { 'idempotency-key': 'withdraw-me' });
  assert.is(queued.status, 201);
  assert.is(queued.body.run, null);
  const path = `/api/v1/threads/${f.threadId}/inbox/${queued.body.entry.id}`;
  assert.is((await f.client.delete(path)).status, 428);
  const etag = (await f.client.get(path)).headers.get('etag')!;
  const withdrawn = await f.client.delete(path, { 'if-match': etag });
  assert.is(withdrawn.status, 200, JSON.stringify(withdrawn.body));
  assert.is(withdrawn.body.entry.status, 'withdrawn');
  assert.is(withdrawn.body.entry.request_key, 'withdraw-me');
  assert.is(withdrawn.body.run.id, busy.body.run.id);
  assert.is((await f.client.delete(path, { 'if-match': (await f.client.get(path)).headers.get('etag')! })).status, 409);
  await f.client.post(`/api/v1/runs/${busy.body.run.id}/cancel`, undefined, { 'idempotency-key': `c-${busy.body.run.id}` });
  await waitForRun(f, busy.body.run.id);
  const thread = await until(() => f.client.get(`/api/v1/threads/${f.threadId}`), (t) => t.body.current_run_id === null);
  assert.is(thread.body.current_run_id, null, 'the withdrawn entry never started');
});

test('items paging: before/after/limit bounds; before with after is 400', async () => {
  const runs = await f.client.get(`/api/v1/runs?thread_id=${f.threadId}&status=completed`);
  const run = runs.body.items[0];
  const all = (await f.client.get(`/api/v1/runs/${run.id}/items?limit=500`)).body.items as Array<{ ordinal: number }>;
  assert.ok(all.length >= 2);
  const firstOnly = await f.client.get(`/api/v1/runs/${run.id}/items?after=0&limit=1`);
  assert.equal(firstOnly.body.items.map((i: { ordinal: number }) => i.ordinal), [1]);
  const beforeLast = await f.client.get(`/api/v1/runs/${run.id}/items?before=${all.length}&limit=1`);
  assert.equal(beforeLast.body.items.map((i: { ordinal: number }) => i.ordinal), [all.length - 1]);
  const newest = await f.client.get(`/api/v1/runs/${run.id}/items?limit=1`);
  assert.equal(newest.body.items.map((i: { ordinal: number }) => i.ordinal), [all.length]);
  assert.is(newest.body.baseline, true);
  assert.is((await f.client.get(`/api/v1/runs/${run.id}/items?before=2&after=1`)).status, 400);
  assert.is((await f.client.get(`/api/v1/runs/${run.id}/items?limit=0`)).status, 400);
  assert.is((await f.client.get(`/api/v1/runs/${run.id}/items?limit=501`)).status, 400);
  assert.is((await f.client.get(`/api/v1/runs/${run.id}/items?before=0`)).status, 400);
  const page = (await f.client.get(`/api/v1/runs/${run.id}/items`)).body;
  assert.is(page.continuation.fragments.max_bytes, 67108864);
  assert.is(page.continuation.fragments.max_pending, 8);
  assert.type(page.resume_after, 'string');
});

test('inputs that could never start are refused when sent: unknown agent 404, unknown model override 404, bad options 400', async () => {
  const unknownAgent = await f.client.post(`/api/v1/threads/${f.threadId}/inbox`, { agent_id: 'ap_missing', payload: { content: [{ type: 'text', text: 'x' }] } }, { 'idempotency-key': 'bad-agent' });
  assert.is(unknownAgent.status, 404);
  const unknownModel = await send(f, 'x', { options: { overrides: { model: 'nope' } } });
  assert.is(unknownModel.status, 404);
  assert.is(unknownModel.body.error.details.field, 'body.options.overrides.model');
  const zeroRequests = await send(f, 'x', { options: { max_usage: { requests: 0 } } });
  assert.is(zeroRequests.status, 400);
  const missingThread = await f.client.post('/api/v1/threads/thr_missing/inbox', { agent_id: f.agentId, payload: { content: [{ type: 'text', text: 'x' }] } }, { 'idempotency-key': 'bad-thread' });
  assert.is(missingThread.status, 404);
  const noKey = await f.client.post(`/api/v1/threads/${f.threadId}/inbox`, { agent_id: f.agentId, payload: { content: [{ type: 'text', text: 'x' }] } });
  assert.is(noKey.status, 400, 'Idempotency-Key is required');
  const entries = (await f.client.get(`/api/v1/threads/${f.threadId}/inbox?limit=200`)).body.items as Array<{ position: number }>;
  assert.equal(entries.map((e) => e.position), entries.map((_, i) => i + 1), 'refused inputs took no position');
});

test('run and attempt metrics count sealed runs and ended attempts', async () => {
  const text = await f.service.services.metrics.registry.metrics();
  assert.match(text, /svc_runs_sealed_total\{[^}]*status="completed"[^}]*\} [1-9]/);
  assert.match(text, /svc_attempts_ended_total\{[^}]*outcome="completed"[^}]*\} [1-9]/);
  assert.match(text, /svc_worker_attempts_active/);
  assert.match(text, /svc_attempt_duration_seconds_count/);
});

test('logs link the request, the run and its attempt by id; message authors name the principal', async () => {
  const posted = await send(f, 'log-link');
  const run = await waitForRun(f, posted.body.run.id);
  const records = f.service.logs.records;
  const request = records.find((r) => r.msg === 'request' && r.run_id === run.id);
  assert.ok(request, 'the request log record names the run it created');
  assert.is(request!.entry_id, posted.body.entry.id);
  assert.ok(records.some((r) => r.msg === 'attempt started' && r.run_id === run.id));
  assert.ok(records.some((r) => r.msg === 'run sealed' && r.run_id === run.id && r.status === 'completed'));
  const authors = await f.client.get(`/api/v1/sessions/${f.sessionId}/message-authors?entry_id=${posted.body.entry.id}&entry_id=ent_missing`);
  assert.is(authors.status, 200);
  assert.is(authors.body.items.length, 1);
  assert.is(authors.body.items[0].entry_id, posted.body.entry.id);
  assert.is(authors.body.items[0].principal.kind, 'api_key');
  assert.is(authors.body.items[0].principal.status, 'active');
  assert.is((await f.client.get(`/api/v1/sessions/${f.sessionId}/message-authors`)).status, 400);
  const tooMany = Array.from({ length: 101 }, (_, i) => `entry_id=e${i}`).join('&');
  assert.is((await f.client.get(`/api/v1/sessions/${f.sessionId}/message-authors?${tooMany}`)).status, 400);
});

test('a run no local worker claimed notifies the workers when the transaction commits (they do not wait for a poll)', async () => {
  // A control process has no worker host: the POST accepts the run for any worker to claim and
  // announces it. (In role all with a free slot the POST claims the run itself and announces it
  // to nobody: local-claim.test.ts.)
  const control = await startRunFixture({ role: 'control', kvUrl: 'redis://127.0.0.1:6379' });
  const listener = new pg.Client({ connectionString: control.db.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload}`));
  await listener.query('listen svc_run_accepted');
  try {
    const posted = await send(control, 'notify-me');
    assert.is(posted.body.run.status, 'accepted');
    await until(() => heard, (h) => h.includes(`svc_run_accepted:${posted.body.run.id}`), 5000);
    assert.is(heard.filter((h) => h.endsWith(posted.body.run.id)).length, 1);
    const entry = posted.body.entry;
    assert.is(entry.status, 'assigned');
    assert.is(entry.assigned_run_id, posted.body.run.id);
  } finally {
    await listener.end();
    await control.stop();
  }
});

test('a queued input started by a seal is claimed in the seal transaction by the sealing worker (no NOTIFY)', async () => {
  const listener = new pg.Client({ connectionString: f.db.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload}`));
  await listener.query('listen svc_run_accepted');
  let release!: () => void;
  scripts.set('seal-first', [{ type: 'text', text: 'first', hold: new Promise<void>((r) => (release = r)) }]);
  try {
    const first = await send(f, 'seal-first');
    assert.is(first.body.run.status, 'running');
    const queued = await send(f, 'seal-queued');
    assert.is(queued.body.run, null);
    release();
    await waitForRun(f, first.body.run.id);
    const entry = await until(() => f.client.get(`/api/v1/threads/${f.threadId}/inbox/${queued.body.entry.id}`), (r) => r.body.assigned_run_id !== null, 5000);
    const runId = entry.body.assigned_run_id as string;
    assert.is((await waitForRun(f, runId)).status, 'completed');
    // Claimed by the transaction that created it (its start is the transaction's now(), like
    // its creation), leased to the worker that ran the first run, and announced to nobody.
    const [row] = await query<{ same: boolean; attempts: number }>(f.db.url, 'select started_at = created_at as same, attempts from runs where id = $1', [runId]);
    assert.equal(row, { same: true, attempts: 1 });
    const workers = await query<{ run_id: string; worker_id: string }>(f.db.url, 'select run_id, worker_id from run_attempts where run_id = any($1)', [[first.body.run.id, runId]]);
    assert.is(new Set(workers.map((w) => w.worker_id)).size, 1, JSON.stringify(workers));
    assert.not.ok(heard.some((h) => h.endsWith(runId)), 'no NOTIFY for a run claimed at acceptance');
  } finally {
    release?.();
    await listener.end();
  }
});

test('run labels change with If-Match; lineage lists the run', async () => {
  const run = (await f.client.get(`/api/v1/runs?thread_id=${f.threadId}`)).body.items[0];
  const read = await f.client.get(`/api/v1/runs/${run.id}`);
  const patched = await f.client.patch(`/api/v1/runs/${run.id}`, { labels: { team: 'a' } }, { 'if-match': read.headers.get('etag')! });
  assert.is(patched.status, 200);
  assert.equal(patched.body.labels, { team: 'a' });
  assert.is((await f.client.patch(`/api/v1/runs/${run.id}`, { labels: { team: 'b' } }, { 'if-match': read.headers.get('etag')! })).status, 412);
  assert.is((await f.client.patch(`/api/v1/runs/${run.id}`, { status: 'failed' }, { 'if-match': patched.headers.get('etag')! })).status, 400);
  const lineage = await f.client.get(`/api/v1/runs/${run.id}/lineage`);
  assert.equal(lineage.body.items.map((r: { id: string }) => r.id), [run.id]);
});

test.run();
