// Several inbox POSTs in one statement (runtime/stores enqueueOnThreads, EnqueueBatcher): each
// input is answered as it would be alone — runs on idle threads, pending entries on busy ones,
// its own key recorded with its own rows, a refused key writing nothing while the others are
// made — and a batch whose statement fails is answered input by input.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { createLogger, createPool, EnqueueBatcher, enqueueOnThreads, STORED_ROWS, type EnqueueStatementInput, type StatementKey } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { freePort } from '../../support/ports.js';
import { newThread, send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/enqueue-batch');
let f: RunFixture;
let pool: pg.Pool;
let workspaceId: string;
let revisionId: string;
let revisionConfig: Record<string, unknown>;
let seq = 0;
let metricsPort = 0;

test.before(async () => {
  // 5 tokens 250 ms apart: a run keeps its thread busy for over a second.
  metricsPort = await freePort();
  f = await startRunFixture({ tokenDelayMs: 250, env: { SVC_METRICS__ENABLED: 'true', SVC_METRICS__PORT: String(metricsPort) } });
  pool = createPool({ url: f.db.url, size: 4, statementTimeoutMs: 0, applicationName: 'test', logger: createLogger({ level: 'silent' }) });
  const [row] = await query<{ workspace_id: string; id: string; config: Record<string, unknown> }>(
    f.db.url,
    'select t.workspace_id, r.id, r.config from threads t, agent_revisions r where t.id = $1 and r.agent_id = $2 order by r.created_at desc limit 1',
    [f.threadId, f.agentId],
  );
  workspaceId = row!.workspace_id;
  revisionId = row!.id;
  revisionConfig = row!.config;
});
test.after(async () => {
  await pool?.end();
  await f?.stop();
});

function input(threadId: string, text: string, key?: string): EnqueueStatementInput {
  const n = ++seq;
  const statementKey: StatementKey | null = key
    ? { scope: { workspace_id: workspaceId, principal_id: 'key_batch', method: 'POST', route: '/threads/{id}/inbox', key, fingerprint: `fp-${key}` }, retentionSeconds: 3600, responseStatus: 201 }
    : null;
  return {
    workspace_id: workspaceId, thread_id: threadId, entry_id: `ent_batch_${process.pid}_${n}`, kind: 'message', delivery: 'queue',
    payload: { content: [{ type: 'text', text }] }, options: {}, agent_id: f.agentId, agent_revision_id: null, principal_id: 'key_batch', request_key: key ?? null,
    run: { id: `run_batch_${process.pid}_${n}`, agent_revision_id: revisionId, max_attempts: 3, labels: { n: String(n) }, config: revisionConfig, memory_mounts: [] },
    accepted_channel: 'svc_run_accepted', steer_channel: 'svc_run_steer', claim: null, key: statementKey,
  };
}

const made = (outcome: unknown) => {
  if (!outcome || typeof outcome !== 'object' || !('entry' in outcome)) throw new Error(`not made: ${JSON.stringify(outcome)}`);
  return outcome as { entry: { id: string; status: string; position: number; assigned_run_id: string | null }; run: { id: string; history_start: number } | null; thread: { id: string; current_run_id: string | null; message_count: number }; history: { length: number; text: string } };
};

test('inputs on idle and busy threads in one statement: each answered and written as alone, each key recorded with its own rows', async () => {
  // An idle thread with history, an idle empty one, a busy one.
  const first = await send(f, 'history first');
  await waitForRun(f, first.body.run.id, ['completed']);
  const idleEmpty = await newThread(f);
  const busy = await newThread(f);
  const running = await send(f, 'keeps it busy', {}, busy);
  assert.is(running.status, 201);
  const before = (await f.client.get(`/api/v1/threads/${f.threadId}`)).body;
  const inputs = [input(f.threadId, 'a', `ka-${process.pid}`), input(idleEmpty, 'b'), input(busy, 'c', `kc-${process.pid}`)];
  const [a, b, c] = (await enqueueOnThreads(pool, inputs)).map(made);
  // Idle with history: a run from the locked history, the entry assigned to it.
  assert.is(a!.entry.status, 'assigned');
  assert.is(a!.run!.id, inputs[0]!.run.id);
  assert.is(a!.entry.assigned_run_id, a!.run!.id);
  assert.is(a!.run!.history_start, before.message_history.length);
  assert.is(a!.thread.current_run_id, a!.run!.id);
  assert.equal(JSON.parse(a!.history.text), before.message_history);
  // Idle and empty: a run, an empty history.
  assert.is(b!.entry.status, 'assigned');
  assert.is(b!.run!.id, inputs[1]!.run.id);
  assert.is(b!.history.length, 0);
  // Busy: pending at the next position, no run, the thread's run unchanged.
  assert.is(c!.entry.status, 'pending');
  assert.is(c!.run, null);
  assert.is(c!.entry.position, running.body.entry.position + 1);
  assert.is(c!.thread.current_run_id, running.body.run.id);
  // Keys: a record per keyed input, with that input's rows; none for the unkeyed one.
  const records = await query<{ key: string; state: string; status_code: number; response_body: string }>(f.db.url, `select key, state, status_code, response_body from idempotency_keys where principal_id = 'key_batch' and key = any($1) order by key`, [[`ka-${process.pid}`, `kc-${process.pid}`]]);
  assert.is(records.length, 2);
  const stored = records.map((r) => JSON.parse(r.response_body)[STORED_ROWS]);
  assert.is(stored[0].entry.id, a!.entry.id);
  assert.is(stored[0].run.id, a!.run!.id);
  assert.is(stored[0].thread.id, f.threadId);
  assert.not.ok('message_history' in stored[0].thread, 'the stored thread carries no history');
  assert.is(stored[1].entry.id, c!.entry.id);
  assert.is(stored[1].run, null);
  assert.ok(records.every((r) => r.state === 'completed' && r.status_code === 201));
  // The runs started: each completes (the worker was told by NOTIFY).
  await waitForRun(f, a!.run!.id, ['completed']);
  await waitForRun(f, b!.run!.id, ['completed']);
  await waitForRun(f, running.body.run.id, ['completed']);
});

test('a refused key writes nothing for its input; the others in the statement are made', async () => {
  const t1 = await newThread(f);
  const t2 = await newThread(f);
  const t3 = await newThread(f);
  // t1's key already has a record; t2's key is held by a twin in flight (its advisory lock).
  const recorded = `kr-${process.pid}`;
  const [once] = (await enqueueOnThreads(pool, [input(t1, 'once', recorded)])).map(made);
  assert.ok(once);
  const twin = new pg.Client({ connectionString: f.db.url });
  await twin.connect();
  try {
    const held = input(t2, 'held', `kh-${process.pid}`);
    await twin.query('begin');
    await twin.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`idempotency\n${workspaceId}\nkey_batch\nPOST\n/threads/{id}/inbox\nkh-${process.pid}`]);
    const outcomes = await enqueueOnThreads(pool, [input(t1, 'again', recorded), held, input(t3, 'free'), input('thr_missing', 'nowhere')]);
    assert.is(outcomes[3], null, 'a thread missing from the workspace: null (404), nothing written');
    assert.equal((outcomes[0] as { refused: { locked: boolean; existing: { fingerprint: string; state: string } } }).refused.locked, true);
    assert.is((outcomes[0] as { refused: { existing: { state: string } } }).refused.existing.state, 'completed');
    assert.equal((outcomes[1] as { refused: unknown }).refused, { locked: false, existing: null });
    const free = made(outcomes[2]);
    assert.is(free.entry.status, 'assigned');
    await twin.query('rollback');
  } finally {
    await twin.end();
  }
  const rows = await query<{ id: string; next_position: number; entries: number }>(f.db.url, `select t.id, t.next_position, (select count(*)::int from inbox_entries e where e.thread_id = t.id) as entries from threads t where t.id = any($1) order by t.id`, [[t1, t2, t3]]);
  const by = new Map(rows.map((r) => [r.id, r]));
  assert.is(by.get(t1)!.entries, 1, 'the refused input added no entry');
  assert.is(by.get(t2)!.entries, 0, 'the locked input added no entry');
  assert.is(by.get(t2)!.next_position, 1, 'nor took a position');
  assert.is(by.get(t3)!.entries, 1);
});

test('the batcher: inputs issued together share one statement; a failed statement is answered input by input; one thread never twice in a batch', async () => {
  const batcher = new EnqueueBatcher(pool);
  const threads = [await newThread(f), await newThread(f), await newThread(f)];
  const together = await Promise.all(threads.map((t, i) => batcher.enqueue(input(t, `together ${i}`, `kt-${process.pid}-${i}`))));
  assert.equal(batcher.counts, { inputs: 3, statements: 1, failed: 0 });
  together.map(made).forEach((m, i) => assert.is(m.thread.id, threads[i]));
  // The same key on two threads: the batch's second record collides with its first (23505), the
  // statement aborts whole, and each input runs alone, as two requests with one key would: one is
  // made, the other refused — a twin in flight (its lock held: 409) or a completed record.
  const [u, v] = [await newThread(f), await newThread(f)];
  const shared = `ks-${process.pid}`;
  const both = await Promise.all([batcher.enqueue(input(u, 'first', shared)), batcher.enqueue(input(v, 'second', shared))]);
  assert.equal(batcher.counts, { inputs: 5, statements: 3, failed: 1 });
  const madeOne = both.filter((o) => o !== null && 'entry' in o).map(made);
  const refused = both.flatMap((o) => (o !== null && 'refused' in o ? [o] : []));
  assert.is(madeOne.length, 1);
  assert.is(refused.length, 1);
  const { locked, existing } = refused[0]!.refused;
  assert.ok((!locked && existing === null) || existing?.state === 'completed', JSON.stringify(refused[0]));
  const entries = await query<{ thread_id: string }>(f.db.url, 'select thread_id from inbox_entries where thread_id = any($1)', [[u, v]]);
  assert.equal(entries.map((e) => e.thread_id), [madeOne[0]!.thread.id], 'one effect; the aborted batch left nothing behind');
  // Two inputs for one thread issued together: two statements, consecutive positions.
  const w = await newThread(f);
  const [p, q] = await Promise.all([batcher.enqueue(input(w, 'p')), batcher.enqueue(input(w, 'q'))]);
  assert.equal(batcher.counts, { inputs: 7, statements: 5, failed: 1 });
  assert.equal([made(p).entry.position, made(q).entry.position].sort(), [1, 2]);
});

test('the batcher tells each input when its statement has been written: once, before its answer, alone or shared', async () => {
  const batcher = new EnqueueBatcher(pool);
  const events: string[] = [];
  const tracked = (threadId: string, name: string): EnqueueStatementInput => ({ ...input(threadId, name), sent: () => events.push(`sent ${name}`) });
  const answered = (name: string) => (outcome: unknown) => (events.push(`answered ${name}`), outcome);
  // Alone: nothing in flight.
  made(await batcher.enqueue(tracked(await newThread(f), 'alone')).then(answered('alone')));
  assert.equal(events, ['sent alone', 'answered alone']);
  // Three in one statement.
  events.length = 0;
  const threads = [await newThread(f), await newThread(f), await newThread(f)];
  const before = batcher.counts.statements;
  (await Promise.all(threads.map((t, i) => batcher.enqueue(tracked(t, `t${i}`)).then(answered(`t${i}`))))).map(made);
  assert.is(batcher.counts.statements, before + 1, 'one statement');
  assert.equal(events.slice(0, 3).sort(), ['sent t0', 'sent t1', 'sent t2'], 'every input told before any answer');
  assert.equal(events.slice(3).sort(), ['answered t0', 'answered t1', 'answered t2']);
});

// Two processes' batchers over the same threads at once, each issuing them in its own order
// (forward, backward), both held on a row in the middle by a third transaction so that their
// statements overlap: batches lock their threads in thread order, so the second queues behind
// the first instead of each holding one half and waiting for the other's (a deadlock PostgreSQL
// would break after deadlock_timeout, failing a batch: counts.failed). Every input is made once,
// at gap-free positions.
test('two batchers over the same threads at once: their row locks queue in thread order, no deadlock', async () => {
  const other = createPool({ url: f.db.url, size: 4, statementTimeoutMs: 0, applicationName: 'test-other', logger: createLogger({ level: 'silent' }) });
  const blocker = new pg.Client({ connectionString: f.db.url });
  await blocker.connect();
  try {
    const [a, b] = [new EnqueueBatcher(pool), new EnqueueBatcher(other)];
    const threads: string[] = [];
    for (let i = 0; i < 9; i++) threads.push(await newThread(f));
    const sorted = [...threads].sort();
    await blocker.query('begin');
    await blocker.query('select 1 from threads where id = $1 for update', [sorted[4]]);
    // Issued together, each batcher's inputs share one statement.
    const forward = threads.map((t) => a.enqueue(input(t, 'a')));
    const backward = [...threads].reverse().map((t) => b.enqueue(input(t, 'b')));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await blocker.query('commit');
    (await Promise.all([...forward, ...backward])).forEach((outcome) => made(outcome));
    assert.equal(a.counts, { inputs: 9, statements: 1, failed: 0 });
    assert.equal(b.counts, { inputs: 9, statements: 1, failed: 0 });
    const rows = await query<{ thread_id: string; positions: number[] }>(f.db.url, 'select thread_id, array_agg(position order by position) as positions from inbox_entries where thread_id = any($1) group by thread_id', [threads]);
    assert.is(rows.length, threads.length);
    for (const row of rows) assert.equal(row.positions, [1, 2], `gap-free on ${row.thread_id}`);
  } finally {
    await blocker.end();
    await other.end();
  }
});

/** svc_statement_batch_* of `kind`, from the service's metrics listener. */
async function batchMetrics(kind: string): Promise<{ items: number; statements: number; failures: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const count = (name: string) => Number(new RegExp(`svc_statement_batch_${name}_total\\{kind="${kind}"[^}]*\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { items: count('items'), statements: count('statements'), failures: count('failures') };
}

test('the service: concurrent POSTs through the API share statements, and its metrics count them', async () => {
  const before = await batchMetrics('inbox');
  const threads: string[] = [];
  for (let i = 0; i < 16; i++) threads.push(await newThread(f));
  const answers = await Promise.all(threads.map((t, i) => send(f, `concurrent ${i}`, {}, t)));
  answers.forEach((answer) => assert.is(answer.status, 201, JSON.stringify(answer.body)));
  const after = await batchMetrics('inbox');
  assert.is(after.items - before.items, 16);
  assert.ok(after.statements - before.statements <= 16);
  assert.is(after.failures, before.failures);
  for (const answer of answers) await waitForRun(f, answer.body.run.id, ['completed']);
  // Role all bounds its background work: its seals go one by one (each its own statement).
  const seals = await batchMetrics('seal');
  assert.ok(seals.items >= 16);
  assert.is(seals.statements, seals.items);
});

test.run();
