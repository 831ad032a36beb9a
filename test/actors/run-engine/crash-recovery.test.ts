import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startModelServer, type ModelScript, type ModelServer } from '../../../bench/model-server.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { spawnService, type ServiceProcess } from '../../support/processes.js';
import { type Client } from '../../support/identity.js';
import { startProcessCluster } from '../../support/process-cluster.js';
import { until } from '../../support/run-fixture.js';

// Real processes: one control process (API and sweeps) and worker processes sharing one
// database and Redis; workers are killed with SIGKILL or frozen with SIGSTOP mid-run.
const test = suite('actors/run-engine/crash-recovery');
let db: TestDatabase;
let model: ModelServer;
let control: ServiceProcess;
const workers: ServiceProcess[] = [];
let client: Client;
let agentId: string;
let sessionId: string;
// Scripts by the run's input text (each test uses its own thread and input).
const scripts = new Map<string, ModelScript[]>();
// The newest message naming a key decides (a client's tool result can name its own key).
const scriptFor = (body: any): ModelScript | undefined => {
  for (const message of [...(body?.messages ?? [])].reverse()) {
    const text = JSON.stringify(message.content);
    const queue = [...scripts.entries()].find(([key]) => text.includes(key))?.[1];
    if (queue) return queue.shift();
  }
  return undefined;
};
let env: Record<string, string>;

const pidOf = (leaseOwner: string) => Number(leaseOwner.split('_')[1]);
const workerByPid = (pid: number) => workers.find((w) => w.child.pid === pid)!;

async function newThread(): Promise<string> {
  return (await client.post(`/api/v1/sessions/${sessionId}/threads`, {})).body.id;
}
async function post(threadId: string, text: string): Promise<string> {
  const r = await client.post(`/api/v1/threads/${threadId}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text }] } }, { 'idempotency-key': `${threadId}-${text.replaceAll(' ', '-')}` });
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body.run.id;
}
async function runRow(runId: string) {
  return (await query<any>(db.url, 'select * from runs where id = $1', [runId]))[0];
}
async function addWorker(): Promise<ServiceProcess> {
  const worker = await spawnService('worker', env);
  workers.push(worker);
  return worker;
}

test.before(async () => {
  db = await createTestDatabase('crash');
  // Paced chunks: a drained attempt must finish its step while the model is still talking.
  model = await startModelServer({ token_delay_ms: 15, script: (request) => scriptFor(request.body) });
  ({ env, control, client, agentId, sessionId } = await startProcessCluster(db, model, {
    prefix: 'crash',
    env: { SVC_WORKER__AUTHORITY_SECONDS: '2', SVC_WORKER__POLL_SECONDS: '1', SVC_WORKER__MAX_ATTEMPTS: '3', SVC_CONTROL__SCAN_SECONDS: '1' },
    agent: { name: 'crashy', config: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } } } },
  }));
  await addWorker();
  await addWorker();
});
test.after(async () => {
  for (const p of [...workers, control]) p?.kill('SIGKILL');
  await model?.close();
  await db?.drop();
});

test('kill -9 of the worker executing a run mid-stream: the run finishes on the other worker from its last checkpoint', async () => {
  scripts.set('crash me', [
    { type: 'tool_calls', calls: [{ id: 'call_1', name: 'echo', arguments: '{"text":"checkpointed"}' }] },
    { type: 'hang', after: ['this part ', 'is lost '] },
    { type: 'text', text: ['finished ', 'elsewhere'] },
  ]);
  const before = model.requests.length;
  const runId = await post(await newThread(), 'crash me');
  await until(() => model.requests.length, (n) => n >= before + 2);
  // the tool step is committed (checkpoint after the tool result) before the worker dies
  await until(() => runRow(runId), (r) => r.next_ordinal >= 4);
  const owner = (await runRow(runId)).lease_owner as string;
  const victim = workerByPid(pidOf(owner));
  victim.kill('SIGKILL');
  await victim.exited;
  const done = await until(() => runRow(runId), (r) => r.status === 'completed' || r.status === 'failed', 30_000);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is(done.attempts, 2);
  assert.is(done.output, 'finished elsewhere');
  assert.is.not(pidOf(done.lease_owner ?? 'x_0') , pidOf(owner));
  const items = (await client.get(`/api/v1/runs/${runId}/items?limit=500`)).body.items as Array<{ ordinal: number; kind: string; content: any }>;
  assert.equal(items.map((i) => i.ordinal), items.map((_, i) => i + 1), 'gap-free, no duplicates');
  assert.is(items.filter((i) => i.kind === 'tool_call').length, 1, `the committed tool call is not repeated: ${JSON.stringify(items.map((i) => [i.ordinal, i.kind, i.content]))}`);
  assert.is(items.filter((i) => i.kind === 'tool_result').length, 1);
  assert.not.ok(JSON.stringify(items).includes('this part'), 'the uncommitted tail of the dead attempt is discarded');
  const attempts = await query<{ outcome: string; charged: boolean }>(db.url, 'select outcome, charged from run_attempts where run_id = $1 order by number', [runId]);
  assert.equal(attempts.map((a) => a.outcome), ['expired', 'completed']);
  workers.splice(workers.indexOf(victim), 1);
  await addWorker();
});

test('SIGSTOP a worker past its lease, then SIGCONT: its writes are refused', async () => {
  scripts.set('freeze me', [{ type: 'hang', after: ['stalled '] }, { type: 'text', text: 'answered by the live worker' }]);
  const before = model.requests.length;
  const runId = await post(await newThread(), 'freeze me');
  await until(() => model.requests.length, (n) => n >= before + 1);
  const frozen = workerByPid(pidOf((await runRow(runId)).lease_owner));
  frozen.kill('SIGSTOP');
  const done = await until(() => runRow(runId), (r) => r.status === 'completed', 30_000);
  const snapshot = await query(db.url, 'select ordinal, id, content from run_items where run_id = $1 order by ordinal', [runId]);
  frozen.kill('SIGCONT');
  await until(() => frozen.output(), (o) => o.includes('lease lost'), 15_000);
  assert.equal(await query(db.url, 'select ordinal, id, content from run_items where run_id = $1 order by ordinal', [runId]), snapshot);
  const after = await runRow(runId);
  assert.is(after.status, 'completed');
  assert.is(after.output, 'answered by the live worker');
  assert.is(after.version, done.version, 'the zombie changed nothing');
});

test('a SIGSTOPped worker keeps its database session: the run stays its own until the lease expires', async () => {
  scripts.set('stall me', [{ type: 'hang', after: ['stalled '] }, { type: 'text', text: 'after the lease' }]);
  const before = model.requests.length;
  const runId = await post(await newThread(), 'stall me');
  await until(() => model.requests.length, (n) => n >= before + 1);
  const frozen = workerByPid(pidOf((await runRow(runId)).lease_owner));
  frozen.kill('SIGSTOP');
  try {
    // Read after the stop: the last lease the stalled process renewed (it renews no more).
    const lease = (await runRow(runId)).lease_expires_at as Date;
    const done = await until(() => runRow(runId), (r) => r.status === 'completed', 30_000);
    assert.is(done.output, 'after the lease');
    const first = (await query<any>(db.url, `select outcome, ended_at >= $2::timestamptz as after_lease from run_attempts where run_id = $1 and number = 1`, [runId, lease]))[0];
    assert.is(first.outcome, 'expired');
    assert.ok(first.after_lease, 'a live session (SIGSTOP) is not taken for a dead one: only the lease expiry ended its attempt');
  } finally {
    frozen.kill('SIGCONT');
  }
  await until(() => frozen.output(), (o) => o.includes('lease lost'), 15_000);
});

test('kill -9 right after the model asked for a server tool and a client tool leaves a consistent waiting run', async () => {
  const agent = await client.post('/api/v1/agents', {
    name: 'hitl-crash',
    config: {
      model: 'fast',
      toolsets: { utilities: { enabled: true, config: {}, tools: {} } },
      client_tools: [{ name: 'pick_color', description: 'client picks a color', parameters_json_schema: { type: 'object' } }],
    },
  });
  // Every first request (a retry after the crash too) asks for both tools; once the client's
  // answer is in the conversation the model answers.
  scripts.set('wait-crash', Array.from({ length: 6 }, () => ({ type: 'tool_calls' as const, calls: [{ id: 'call_echo', name: 'echo', arguments: '{"text":"server side"}' }, { id: 'call_color', name: 'pick_color', arguments: '{}' }] })));
  scripts.set('teal', [{ type: 'text', text: 'teal noted' }]);
  const threadId = await newThread();
  const before = model.requests.length;
  const posted = await client.post(`/api/v1/threads/${threadId}/inbox`, { agent_id: agent.body.id, payload: { content: [{ type: 'text', text: 'wait-crash' }] } }, { 'idempotency-key': `wc-${threadId}` });
  const runId = posted.body.run.id;
  await until(() => model.requests.length, (n) => n > before);
  const owner = (await runRow(runId)).lease_owner as string | null;
  if (owner) {
    const victim = workerByPid(pidOf(owner));
    victim.kill('SIGKILL');
    await victim.exited;
    workers.splice(workers.indexOf(victim), 1);
    await addWorker();
  }
  const waiting = await until(() => runRow(runId), (r) => r.status === 'waiting', 30_000);
  assert.equal(waiting.pending.calls.map((c: { tool_call_id: string }) => c.tool_call_id), ['call_color']);
  const items = (await client.get(`/api/v1/runs/${runId}/items?limit=500`)).body.items as Array<{ ordinal: number; kind: string; content: any }>;
  assert.equal(items.map((i) => i.ordinal), items.map((_, i) => i + 1));
  assert.is(items.filter((i) => i.kind === 'tool_result' && i.content.tool_call_id === 'call_echo').length, 1, 'the server tool ran once in the committed history');
  const resumed = await client.post(`/api/v1/runs/${runId}/resume`, { calls: { call_color: { status: 'returned', value: 'teal' } } }, { 'idempotency-key': `wc-resume-${runId}` });
  assert.is(resumed.status, 201, JSON.stringify(resumed.body));
  const done = await until(() => runRow(resumed.body.id), (r) => r.status === 'completed' || r.status === 'failed', 30_000);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is(done.output, 'teal noted');
});

test('SIGTERM drains: the attempt finishes its step, hands off uncharged, and the run continues on another worker', async () => {
  let landed!: () => void;
  const drainLanded = new Promise<void>((resolve) => (landed = resolve));
  scripts.set('drain me', [
    // The first response stays open (hold) until the SIGTERM has landed: the drain must reach
    // the attempt while its first step is still streaming, also on a loaded machine (a paced
    // text alone once lost that race in CI).
    { type: 'tool_calls', calls: [{ id: 'call_d', name: 'echo', arguments: '{"text":"before drain"}' }], text: 'slow ', hold: drainLanded },
    { type: 'text', text: ['after ', 'handoff'] },
  ]);
  const before = model.requests.length;
  const runId = await post(await newThread(), 'drain me');
  await until(() => model.requests.length, (n) => n > before);
  const draining = workerByPid(pidOf((await runRow(runId)).lease_owner));
  draining.kill('SIGTERM');
  // The drain is posted to the attempt as the process handles the signal; give it a second.
  setTimeout(landed, 1_000);
  assert.is(await draining.exited, 0, 'the worker exits cleanly after draining');
  workers.splice(workers.indexOf(draining), 1);
  await addWorker();
  const done = await until(() => runRow(runId), (r) => r.status === 'completed' || r.status === 'failed', 30_000);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is(done.output, 'after handoff');
  const attempts = await query<{ outcome: string; charged: boolean }>(db.url, 'select outcome, charged from run_attempts where run_id = $1 order by number', [runId]);
  assert.equal(attempts, [{ outcome: 'handoff', charged: false }, { outcome: 'completed', charged: false }]);
  assert.is(done.charged_attempts, 0);
});

test('kill -9 of the worker running a subagent child: one child result, one parent successor', async () => {
  const childAgent = (await client.post('/api/v1/agents', { name: 'child', config: { model: 'fast' } })).body.id;
  const parentAgent = (await client.post('/api/v1/agents', { name: 'parent', config: { model: 'fast', subagents: { kid: { agent_id: childAgent } } } })).body.id;
  scripts.set('crash parent', [{ type: 'tool_calls', calls: [{ id: 'call_kid', name: 'delegate_kid', arguments: '{"task":"crash child task"}' }] }, { type: 'text', text: 'parent done' }]);
  scripts.set('crash child task', [{ type: 'hang', after: ['partial '] }, { type: 'text', text: 'child survived' }]);
  const threadId = await newThread();
  const posted = await client.post(`/api/v1/threads/${threadId}/inbox`, { agent_id: parentAgent, payload: { content: [{ type: 'text', text: 'crash parent' }] } }, { 'idempotency-key': `${threadId}-crash-parent` });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  const parentId = posted.body.run.id as string;
  const child = await until(() => query<any>(db.url, `select r.* from runs r join threads t on t.id = r.thread_id where t.origin_run_id = $1`, [parentId]), (rows) => rows[0]?.status === 'running' && rows[0]?.lease_owner, 30_000);
  await until(() => model.requests.filter((r) => JSON.stringify(r.body).includes('crash child task')).length, (n) => n >= 1, 15_000);
  const victim = workerByPid(pidOf(child[0].lease_owner));
  victim.kill('SIGKILL');
  await victim.exited;
  workers.splice(workers.indexOf(victim), 1);
  await addWorker();
  const parent = await until(() => runRow(parentId), (r) => r.resumed_by_id !== null, 30_000);
  const successor = await until(() => runRow(parent.resumed_by_id), (r) => r.status === 'completed' || r.status === 'failed', 30_000);
  assert.is(successor.status, 'completed', JSON.stringify(successor.failure));
  assert.equal(successor.resume.calls, { call_kid: { status: 'returned', value: 'child survived' } });
  const childDone = await runRow(child[0].id);
  assert.is(childDone.attempts, 2, 'the child continued on another worker');
  const results = await query<{ state: string }>(db.url, `select state from outbox where kind = 'child_result' and payload->>'parent_run_id' = $1`, [parentId]);
  assert.is(results.length, 1, 'exactly one child result');
  const successors = await query(db.url, `select id from runs where parent_run_id = $1 and lineage = 'resume'`, [parentId]);
  assert.is(successors.length, 1, 'exactly one parent successor');
});

test('a run whose workers keep dying fails after worker.max_attempts with a failure code', async () => {
  scripts.set('doomed', Array.from({ length: 5 }, () => ({ type: 'hang' as const })));
  const runId = await post(await newThread(), 'doomed');
  for (let attempt = 1; attempt <= 3; attempt++) {
    const row = await until(() => runRow(runId), (r) => r.status === 'running' && r.attempts === attempt && r.lease_owner, 30_000);
    await until(() => model.requests.filter((r) => JSON.stringify(r.body).includes('doomed')).length, (n) => n >= attempt, 15_000);
    const victim = workerByPid(pidOf(row.lease_owner));
    victim.kill('SIGKILL');
    await victim.exited;
    workers.splice(workers.indexOf(victim), 1);
    await addWorker();
  }
  const failed = await until(() => runRow(runId), (r) => r.status === 'failed', 30_000);
  assert.is(failed.failure.code, 'attempts_exhausted');
  assert.is(failed.attempts, 3);
});

test.run();
