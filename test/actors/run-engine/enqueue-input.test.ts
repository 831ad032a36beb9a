// The inbox POST's one-statement path (runtime/stores/enqueue-input.ts, used by enqueueInput
// for an input whose checks pass before the transaction): what its 201 and rows say on an idle
// thread with history, on a busy thread, and which 404 a bad input gets (the step-by-step
// path's order). Concurrency (gap-free positions, one run at a time) is inbox-ordering's.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { enqueueOnThread, withTransaction, createPool, createLogger } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/enqueue-input');
let f: RunFixture;

test.before(async () => {
  // 5 tokens 250 ms apart: a run keeps its thread busy for over a second.
  f = await startRunFixture({ tokenDelayMs: 250 });
});
test.after(async () => {
  await f?.stop();
});

test('an idle thread with history: the 201 carries the locked history, the run starts from it, the thread names it', async () => {
  const first = await send(f, 'first');
  assert.is(first.status, 201, JSON.stringify(first.body));
  await waitForRun(f, first.body.run.id, ['completed']);
  const before = (await f.client.get(`/api/v1/threads/${f.threadId}`)).body;
  assert.is(before.message_history.length, 2);
  const second = await send(f, 'second');
  assert.is(second.status, 201, JSON.stringify(second.body));
  const { entry, run, thread } = second.body;
  assert.is(entry.status, 'assigned');
  assert.is(entry.assigned_run_id, run.id);
  assert.is(entry.position, first.body.entry.position + 1);
  assert.is(thread.current_run_id, run.id);
  assert.equal(thread.message_history, before.message_history, 'the history as the thread has it');
  assert.is(thread.version, before.version + 1);
  assert.is(run.source_entry_id, entry.id);
  const [row] = await query<{ history_start: number; lineage: string; revision_selection: string; session_id: string }>(f.db.url, 'select history_start, lineage, revision_selection, session_id from runs where id = $1', [run.id]);
  assert.equal(row, { history_start: 2, lineage: 'root', revision_selection: 'default', session_id: f.sessionId });
  await waitForRun(f, run.id, ['completed']);
  // The attempt got that history (as the statement's text, parsed on the attempt's thread): the
  // model request carries the first run's exchange before the new message.
  const request = f.model.requests.findLast((r) => JSON.stringify(r.body).includes('second'));
  const sent = JSON.stringify((request?.body as { messages?: unknown[] } | undefined)?.messages ?? []);
  assert.ok(sent.indexOf('first') >= 0 && sent.indexOf('first') < sent.indexOf('second'), sent);
});

test('a busy thread: the entry waits pending at the next position, no run, the thread unchanged but its position', async () => {
  const running = await send(f, 'keeps the thread busy');
  assert.is(running.status, 201);
  const busy = (await f.client.get(`/api/v1/threads/${f.threadId}`)).body;
  assert.is(busy.current_run_id, running.body.run.id);
  const queued = await send(f, 'waits');
  assert.is(queued.status, 201, JSON.stringify(queued.body));
  assert.is(queued.body.run, null);
  assert.is(queued.body.entry.status, 'pending');
  assert.is(queued.body.entry.assigned_run_id, null);
  assert.is(queued.body.entry.position, running.body.entry.position + 1);
  assert.is(queued.body.thread.current_run_id, running.body.run.id);
  assert.is(queued.body.thread.version, busy.version, 'queueing does not change the thread');
  const runs = await query<{ n: number }>(f.db.url, `select count(*)::int as n from runs where thread_id = $1 and status in ('accepted', 'running')`, [f.threadId]);
  assert.is(runs[0]!.n, 1);
  // It starts when the running one seals.
  await waitForRun(f, running.body.run.id, ['completed']);
  const started = await query<{ id: string }>(f.db.url, 'select id from runs where source_entry_id = $1', [queued.body.entry.id]);
  assert.is(started.length, 1);
  await waitForRun(f, started[0]!.id, ['completed']);
});

test('a bad input gets the 404 of the step-by-step order: the thread before the agent', async () => {
  const missingBoth = await f.client.post('/api/v1/threads/thr_missing/inbox', { agent_id: 'ap_missing', payload: { content: [{ type: 'text', text: 'x' }] } }, { 'idempotency-key': `bad-${Date.now()}` });
  assert.is(missingBoth.status, 404);
  assert.match(missingBoth.body.error.message, /thread not found/);
  const missingThread = await f.client.post('/api/v1/threads/thr_missing/inbox', { agent_id: f.agentId, payload: { content: [{ type: 'text', text: 'x' }] } }, { 'idempotency-key': `bad2-${Date.now()}` });
  assert.is(missingThread.status, 404);
  assert.match(missingThread.body.error.message, /thread not found/);
  const missingAgent = await send(f, 'x', { agent_id: 'ap_missing' });
  assert.is(missingAgent.status, 404);
  assert.is(missingAgent.body.error.details.field, 'body.agent_id');
});

test('the statement on a thread of another workspace returns null and writes nothing', async () => {
  const pool = createPool({ url: f.db.url, size: 1, statementTimeoutMs: 0, applicationName: 'test', logger: createLogger({ level: 'silent' }) });
  try {
    const result = await withTransaction(pool, (tx) =>
      enqueueOnThread(tx, {
        workspace_id: 'ws_other', thread_id: f.threadId, entry_id: 'ent_foreign', kind: 'message', delivery: 'queue', payload: { content: [] }, options: {},
        agent_id: f.agentId, agent_revision_id: null, principal_id: 'key_x', request_key: null,
        run: { id: 'run_foreign', agent_revision_id: 'apr_x', max_attempts: 3, labels: {}, config: {}, memory_mounts: [] },
        accepted_channel: 'svc_run_accepted', steer_channel: 'svc_run_steer', claim: null,
      }),
    );
    assert.is(result, null);
  } finally {
    await pool.end();
  }
  const rows = await query<{ n: number }>(f.db.url, `select (select count(*) from inbox_entries where id = 'ent_foreign') + (select count(*) from runs where id = 'run_foreign') as n`);
  assert.is(Number(rows[0]!.n), 0);
});

test.run();
