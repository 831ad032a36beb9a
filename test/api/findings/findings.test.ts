import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { login, type Client } from '../../support/identity.js';
import { send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('api/findings/findings');
let f: RunFixture;
let other: Client;
let revisionId: string;
let runA: string;
let runB: string;
let otherAgentRun: string;

const ifMatch = (response: { headers: Headers }) => ({ 'if-match': response.headers.get('etag') ?? '' });
const body = (extra: Record<string, unknown> = {}) => ({
  agent_id: f.agentId,
  agent_revision_id: revisionId,
  category: 'unclear_request',
  evidence: [{ run_id: runA, trace_id: runA }],
  explanation: 'The request did not say which account.',
  source_key: `key-${Math.random().toString(36).slice(2)}`,
  suggestion: 'Ask which account is meant.',
  title: 'Ambiguous account',
  ...extra,
});

test.before(async () => {
  f = await startRunFixture();
  const agent = await f.client.get(`/api/v1/agents/${f.agentId}`);
  revisionId = agent.body.default_revision_id;
  const first = await send(f, 'one');
  runA = (await waitForRun(f, first.body.run.id)).id;
  const second = await send(f, 'two');
  runB = (await waitForRun(f, second.body.run.id)).id;
  const otherAgent = await f.client.post('/api/v1/agents', { name: 'other', config: { model: 'fast' } });
  const thread = await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {});
  const third = await send(f, 'three', { agent_id: otherAgent.body.id }, thread.body.id);
  otherAgentRun = (await waitForRun(f, third.body.run.id)).id;
  const session = await login(f.service.url, 'admin@example.com', 'admin-password');
  const workspace = await session.post('/api/v1/workspaces', { name: 'Other' });
  assert.is(workspace.status, 201, JSON.stringify(workspace.body));
  other = session.with({ 'x-workspace-id': workspace.body.id });
});
test.after(async () => {
  await f?.stop();
});

test('creates a finding with every field of the view, defaults applied, and an ETag', async () => {
  const created = await f.client.post('/api/v1/findings', body({ source_key: 'first', evidence: [{ run_id: runA, trace_id: runA }, { run_id: runB, trace_id: runB, span_ids: ['itm_1'] }] }));
  assert.is(created.status, 201, JSON.stringify(created.body));
  const v = created.body;
  assert.ok(v.id.startsWith('fnd_'));
  assert.is(created.headers.get('etag'), `"${v.id}:1"`);
  assert.equal(
    Object.keys(v).sort(),
    ['agent_id', 'agent_revision_id', 'analysis_id', 'assessment', 'assessment_note', 'category', 'closed', 'created_at', 'created_by_id', 'evidence', 'explanation', 'id', 'limitations', 'severity', 'source_key', 'source_run_id', 'suggestion', 'title', 'updated_at', 'version', 'workspace_id'].sort(),
  );
  assert.is(v.severity, 'medium');
  assert.is(v.assessment, 'unreviewed');
  assert.is(v.assessment_note, '');
  assert.is(v.closed, false);
  assert.is(v.analysis_id, null);
  assert.is(v.source_run_id, null);
  assert.is(v.limitations, '');
  assert.equal(v.evidence, [{ run_id: runA, trace_id: runA, span_ids: [] }, { run_id: runB, trace_id: runB, span_ids: ['itm_1'] }]);
  const read = await f.client.get(`/api/v1/findings/${v.id}`);
  assert.is(read.status, 200);
  assert.equal(read.body, v);
  assert.is(read.headers.get('etag'), `"${v.id}:1"`);
  const audit = await f.client.get(`/api/v1/audit-events?resource_type=finding&resource_id=${v.id}`);
  assert.equal(audit.body.items.map((e: { action: string }) => e.action), ['finding.created']);
});

test('refuses missing required fields and values outside the enumerations (400 naming the field)', async () => {
  for (const field of ['agent_id', 'agent_revision_id', 'category', 'evidence', 'explanation', 'source_key', 'suggestion', 'title']) {
    const b = body() as Record<string, unknown>;
    delete b[field];
    const response = await f.client.post('/api/v1/findings', b);
    assert.is(response.status, 400, field);
    assert.is(response.body.error.code, 'invalid_argument');
    assert.match(JSON.stringify(response.body.error), field);
  }
  assert.is((await f.client.post('/api/v1/findings', body({ category: 'nonsense' }))).status, 400);
  assert.is((await f.client.post('/api/v1/findings', body({ severity: 'apocalyptic' }))).status, 400);
  assert.is((await f.client.post('/api/v1/findings', body({ evidence: [] }))).status, 400);
  const critical = await f.client.post('/api/v1/findings', body({ severity: 'critical' }));
  assert.is(critical.status, 201);
  assert.is(critical.body.severity, 'critical');
});

test('evidence must cite runs of the agent: unknown run 404, another agent\'s run or a wrong trace_id 400', async () => {
  const missing = await f.client.post('/api/v1/findings', body({ evidence: [{ run_id: 'run_nope', trace_id: 'run_nope' }] }));
  assert.is(missing.status, 404);
  assert.is(missing.body.error.details.field, 'body.evidence[0].run_id');
  const foreign = await f.client.post('/api/v1/findings', body({ evidence: [{ run_id: otherAgentRun, trace_id: otherAgentRun }] }));
  assert.is(foreign.status, 400);
  assert.is(foreign.body.error.details.field, 'body.evidence[0].run_id');
  const trace = await f.client.post('/api/v1/findings', body({ evidence: [{ run_id: runA, trace_id: runB }] }));
  assert.is(trace.status, 400);
  assert.is(trace.body.error.details.field, 'body.evidence[0].trace_id');
  assert.is((await f.client.post('/api/v1/findings', body({ agent_id: 'ap_missing' }))).status, 404);
  assert.is((await f.client.post('/api/v1/findings', body({ agent_revision_id: 'apr_missing' }))).status, 404);
});

test('a second finding with the same source_key for the agent is 409 naming the first', async () => {
  const first = await f.client.post('/api/v1/findings', body({ source_key: 'dup' }));
  assert.is(first.status, 201);
  const second = await f.client.post('/api/v1/findings', body({ source_key: 'dup', title: 'again' }));
  assert.is(second.status, 409);
  assert.is(second.body.error.code, 'conflict');
  assert.is(second.body.error.details.finding_id, first.body.id);
});

test('lists with filters and a cursor', async () => {
  await f.client.post('/api/v1/findings', body({ category: 'hallucination', severity: 'low' }));
  const all = await f.client.get(`/api/v1/findings?agent_id=${f.agentId}`);
  assert.is(all.status, 200);
  assert.ok(all.body.items.length >= 4);
  const halluc = await f.client.get('/api/v1/findings?category=hallucination');
  assert.ok(halluc.body.items.length >= 1 && halluc.body.items.every((i: { category: string }) => i.category === 'hallucination'));
  const low = await f.client.get('/api/v1/findings?severity=low&closed=false');
  assert.ok(low.body.items.length >= 1 && low.body.items.every((i: { severity: string; closed: boolean }) => i.severity === 'low' && !i.closed));
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const pageResponse: { body: { items: Array<{ id: string }>; next_cursor: string | null } } = await f.client.get(`/api/v1/findings?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
    ids.push(...pageResponse.body.items.map((i) => i.id));
    cursor = pageResponse.body.next_cursor;
  } while (cursor);
  assert.equal(ids, all.body.items.map((i: { id: string }) => i.id));
  assert.is((await f.client.get('/api/v1/findings?category=bogus')).status, 400);
  assert.is((await f.client.get('/api/v1/findings?unknown=1')).status, 400);
});

test('PATCH reviews a finding under If-Match: 428 without, 412 stale, no-op keeps the version', async () => {
  const created = await f.client.post('/api/v1/findings', body());
  const id = created.body.id;
  assert.is((await f.client.patch(`/api/v1/findings/${id}`, { closed: true })).status, 428);
  const changed = await f.client.patch(`/api/v1/findings/${id}`, { assessment: 'confirmed', assessment_note: 'seen it', closed: true }, ifMatch(created));
  assert.is(changed.status, 200, JSON.stringify(changed.body));
  assert.is(changed.body.version, 2);
  assert.is(changed.body.assessment, 'confirmed');
  assert.is(changed.body.assessment_note, 'seen it');
  assert.is(changed.body.closed, true);
  assert.is((await f.client.patch(`/api/v1/findings/${id}`, { closed: false }, ifMatch(created))).status, 412);
  const same = await f.client.patch(`/api/v1/findings/${id}`, { closed: true }, ifMatch(changed));
  assert.is(same.status, 200);
  assert.is(same.body.version, 2);
  assert.is((await f.client.patch(`/api/v1/findings/${id}`, { assessment: 'maybe' }, ifMatch(changed))).status, 400);
  assert.is((await f.client.patch(`/api/v1/findings/${id}`, { title: 'no' }, ifMatch(changed))).status, 400);
  const closed = await f.client.get(`/api/v1/findings?closed=true&agent_id=${f.agentId}`);
  assert.ok(closed.body.items.some((i: { id: string }) => i.id === id));
  const audit = await f.client.get(`/api/v1/audit-events?resource_type=finding&resource_id=${id}`);
  assert.equal(audit.body.items.map((e: { action: string }) => e.action).sort(), ['finding.created', 'finding.updated']);
});

test("another workspace's findings, agents and runs answer 404", async () => {
  const created = await f.client.post('/api/v1/findings', body());
  assert.is((await other.get(`/api/v1/findings/${created.body.id}`)).status, 404);
  assert.is((await other.patch(`/api/v1/findings/${created.body.id}`, { closed: true }, ifMatch(created))).status, 404);
  assert.is((await other.post('/api/v1/findings', body())).status, 404);
  const listed = await other.get('/api/v1/findings');
  assert.equal(listed.body.items, []);
});

test.run();
