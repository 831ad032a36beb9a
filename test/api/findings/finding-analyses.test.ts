import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelScript } from '../../../bench/model-server.js';
import { login, type Client } from '../../support/identity.js';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('api/findings/finding-analyses');
let f: RunFixture;
let other: Client;
let runOld: string;
let runNew: string;
let keys = 0;
// The finding agent's answer: built once the analysed runs exist (it cites one of them).
let analysisReply: unknown = { findings: [] };

const analyse = (body: Record<string, unknown>, key = `fa-${process.pid}-${++keys}`, client?: Client) => (client ?? f.client).post('/api/v1/finding-analyses', body, { 'idempotency-key': key });

async function settled(id: string): Promise<any> {
  const done = await until(
    () => f.client.get(`/api/v1/finding-analyses/${id}`),
    (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.run_status),
  );
  return done.body;
}

test.before(async () => {
  f = await startRunFixture({
    // the analysis input starts with "Review these"; every other run gets the default text
    script: (request): ModelScript | undefined => {
      const text = JSON.stringify(request.body?.messages ?? []);
      return text.includes('Review these') ? { type: 'text', text: JSON.stringify(analysisReply) } : undefined;
    },
  });
  const first = await send(f, 'first question');
  runOld = (await waitForRun(f, first.body.run.id)).id;
  const second = await send(f, 'second question');
  runNew = (await waitForRun(f, second.body.run.id)).id;
  analysisReply = {
    findings: [
      {
        category: 'unclear_request',
        severity: 'critical',
        title: 'The first question was unclear',
        explanation: 'The agent guessed.',
        suggestion: 'Ask a clarifying question.',
        evidence: [
          { run_id: runOld, trace_id: runOld },
          { run_id: 'run_not_selected', trace_id: 'run_not_selected' },
        ],
        source_key: 'unclear-first',
      },
    ],
  };
  const session = await login(f.service.url, 'admin@example.com', 'admin-password');
  const workspace = await session.post('/api/v1/workspaces', { name: 'Other' });
  other = session.with({ 'x-workspace-id': workspace.body.id });
});
test.after(async () => {
  await f?.stop();
});

test('analyses the selected traces and records the findings citing only them', async () => {
  assert.is((await f.client.post('/api/v1/finding-analyses', { agent_id: f.agentId })).status, 400, 'Idempotency-Key is required');
  const key = `fa-main-${process.pid}`;
  const created = await analyse({ agent_id: f.agentId, max_traces: 5 }, key);
  assert.is(created.status, 201, JSON.stringify(created.body));
  const v = created.body;
  assert.ok(v.id.startsWith('fan_'));
  assert.is(v.agent_id, f.agentId);
  assert.ok(v.run_id.startsWith('run_') && v.session_id.startsWith('ses_') && v.thread_id.startsWith('thr_'));
  // Started through the inbox: in this one `all` process with a free slot, claimed at once.
  assert.is(v.run_status, 'running');
  assert.is(v.finding_count, 0);
  assert.equal(v.selected_traces, [{ run_id: runNew, trace_id: runNew }, { run_id: runOld, trace_id: runOld }]);
  assert.equal(v.read_trace_ids, [runNew, runOld]);
  assert.equal(v.selection, { agent_id: f.agentId, trace_id: null, max_traces: 5, presets: ['execution'], started_after: null, started_before: null });
  assert.is(v.selection_truncated, false);

  const replay = await analyse({ agent_id: f.agentId, max_traces: 5 }, key);
  assert.is(replay.status, 201);
  assert.is(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.body, v);

  const done = await settled(v.id);
  assert.is(done.run_status, 'completed');
  // (On failure: what the service logged about this run, e.g. a failed seal hook.)
  assert.is(done.finding_count, 1, JSON.stringify(f.service.logs.records.filter((r) => r.run_id === v.run_id || (r.level as number) >= 50)).slice(0, 4000));
  assert.is(done.cited_trace_count, 1);

  const run = await f.client.get(`/api/v1/runs/${v.run_id}`);
  const input = run.body.input.content[0].text as string;
  assert.ok(input.includes(`run_id=${runOld}`) && input.includes(`run_id=${runNew}`) && input.includes('first question') && input.includes('items:'));
  const finderAgent = await f.client.post('/api/v1/finding-agent');
  assert.is(finderAgent.status, 200, 'prepared by the analysis, returned afterwards');
  assert.is(run.body.agent_id, finderAgent.body.id);

  const findings = await f.client.get(`/api/v1/findings?analysis_id=${v.id}`);
  assert.is(findings.body.items.length, 1);
  const finding = findings.body.items[0];
  assert.is(finding.agent_id, f.agentId);
  assert.is(finding.analysis_id, v.id);
  assert.is(finding.source_run_id, v.run_id);
  assert.is(finding.source_key, 'unclear-first');
  assert.is(finding.category, 'unclear_request');
  assert.is(finding.severity, 'critical');
  assert.is(finding.assessment, 'unreviewed');
  assert.equal(finding.evidence, [{ run_id: runOld, trace_id: runOld, span_ids: [] }]);
  assert.match(finding.limitations, 'dropped');
  const analysed = await f.client.get(`/api/v1/runs/${runOld}`);
  assert.is(finding.agent_revision_id, analysed.body.agent_revision_id);
});

test('max_traces keeps the newest traces and reports the truncation; a finding citing no selected trace is not recorded', async () => {
  const created = await analyse({ agent_id: f.agentId, max_traces: 1 });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.selected_traces, [{ run_id: runNew, trace_id: runNew }]);
  assert.equal(created.body.read_trace_ids, [runNew]);
  assert.is(created.body.selection_truncated, true);
  const done = await settled(created.body.id);
  assert.is(done.run_status, 'completed');
  assert.is(done.finding_count, 0);
  assert.is(done.cited_trace_count, 0);
});

test('trace_id selects one trace; time windows filter; bad selections are refused', async () => {
  const one = await analyse({ agent_id: f.agentId, trace_id: runOld, presets: [] });
  assert.is(one.status, 201, JSON.stringify(one.body));
  assert.equal(one.body.selected_traces, [{ run_id: runOld, trace_id: runOld }]);
  assert.equal(one.body.selection.presets, []);
  await settled(one.body.id);
  const oldRun = await f.client.get(`/api/v1/runs/${runOld}`);
  const newRun = await f.client.get(`/api/v1/runs/${runNew}`);
  const windowed = await analyse({ agent_id: f.agentId, started_after: '2000-01-01T00:00:00Z', started_before: newRun.body.created_at });
  assert.is(windowed.status, 201, JSON.stringify(windowed.body));
  assert.equal(windowed.body.selected_traces, [{ run_id: runOld, trace_id: runOld }], 'created strictly before the newer run');
  assert.is(windowed.body.selection.started_before, new Date(newRun.body.created_at).toISOString());
  await settled(windowed.body.id);
  const before = await analyse({ agent_id: f.agentId, started_before: oldRun.body.created_at });
  assert.is(before.status, 400, 'strictly before the oldest run: nothing matches');
  const future = await analyse({ agent_id: f.agentId, started_after: '2999-01-01T00:00:00Z' });
  assert.is(future.status, 400);
  assert.match(future.body.error.message, 'no sealed run', JSON.stringify(future.body));
  assert.is((await analyse({ agent_id: f.agentId, started_after: 'yesterday' })).status, 400);
  assert.is((await analyse({ agent_id: f.agentId, max_traces: 51 })).status, 400);
  assert.is((await analyse({ agent_id: f.agentId, max_traces: 0 })).status, 400);
  assert.is((await analyse({ agent_id: f.agentId, presets: ['everything'] })).status, 400);
  assert.is((await analyse({ agent_id: f.agentId, trace_id: 'run_missing' })).status, 404);
  assert.is((await analyse({ agent_id: 'ap_missing' })).status, 404);
  assert.is((await f.client.get('/api/v1/finding-analyses/fan_missing')).status, 404);
});

test("another workspace's analyses, agents and traces answer 404", async () => {
  const created = await analyse({ agent_id: f.agentId, max_traces: 1 });
  assert.is((await other.get(`/api/v1/finding-analyses/${created.body.id}`)).status, 404);
  assert.is((await analyse({ agent_id: f.agentId }, undefined, other)).status, 404);
  await settled(created.body.id);
});

test.run();
