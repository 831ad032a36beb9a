// Role all: an input on a thread whose whole history this process holds starts its attempt
// before the inbox statement commits (actors/worker SpeculativeAttempt, issue #18). What must
// hold:
// - the model is asked while the statement still waits (here: for the thread's row lock, held
//   by the test), and the committed run adopts that very request: one request, one answer;
// - the history the attempt sends is the thread's, also after a seal in this process (the
//   seal's appended messages are remembered as PostgreSQL prints them);
// - when the run committed is not the one speculated (the history grew elsewhere meanwhile),
//   the speculated attempt is cancelled and nothing of it is kept: the run asks again with the
//   history it committed, and its items hold only that answer;
// - a replayed Idempotency-Key starts no run: its speculation is dropped, nothing is written;
// - under concurrent inputs on shared threads (speculations adopted and discarded), every input
//   has exactly one run with exactly one answer, and each thread's history holds each input once.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { freePort } from '../../support/ports.js';
import { keyedScript, newThread, requestsMentioning, send, speculationCounts, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import type { ModelScript } from '../../../bench/model-server.js';

const test = suite('actors/run-engine/speculative-start');
let f: RunFixture;
let metricsPort = 0;
const scripts = new Map<string, ModelScript[]>();

test.before(async () => {
  metricsPort = await freePort();
  f = await startRunFixture({ script: keyedScript(scripts), env: { SVC_METRICS__ENABLED: 'true', SVC_METRICS__PORT: String(metricsPort) } });
});
test.after(async () => {
  await f?.stop();
});

/** The model requests whose messages mention `key`. */
const requestsFor = (key: string) => requestsMentioning(f, key);

/** Holds the thread's row lock in a transaction of its own until `release` (optionally changing the row first). */
async function lockThread(threadId: string, change?: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: f.db.url });
  await client.connect();
  await client.query('begin');
  await client.query('select 1 from threads where id = $1 for update', [threadId]);
  if (change) await client.query(change, [threadId]);
  return {
    release: async () => {
      await client.query('commit');
      await client.end();
    },
  };
}

async function assistantTexts(runId: string): Promise<string[]> {
  const items = await f.client.get(`/api/v1/runs/${runId}/items`);
  assert.is(items.status, 200, JSON.stringify(items.body));
  return (items.body.items as Array<{ kind: string; content: unknown }>).filter((i) => i.kind === 'text_message').map((i) => JSON.stringify(i.content));
}

test('the model is asked while the statement waits for the thread; the committed run adopts that request', async () => {
  const thread = await newThread(f);
  // The thread's first input (its empty history known from its creation here), then its second
  // (the history the first run's seal left, remembered here).
  for (const [n, key] of [[1, 'spec-first-input'], [2, 'spec-second-input']] as const) {
    scripts.set(key, [{ type: 'text', text: `answer ${n}` }]);
    const lock = await lockThread(thread);
    let posting: ReturnType<typeof send> | null = null;
    try {
      posting = send(f, key, {}, thread);
      // Asked before the statement could take the row lock: no run exists yet.
      await until(() => requestsFor(key).length, (count) => count === 1, 5000);
      const runs = await query<{ n: number }>(f.db.url, 'select count(*)::int as n from runs where thread_id = $1', [thread]);
      assert.is(runs[0]!.n, n - 1, 'the request came before the run was committed');
      if (n === 2) assert.ok(JSON.stringify(requestsFor(key)[0]!.body?.messages).includes('answer 1'), 'the history the first seal left is in the request');
    } finally {
      await lock.release();
    }
    const posted = await posting!;
    assert.is(posted.status, 201, JSON.stringify(posted.body));
    const done = await waitForRun(f, posted.body.run.id);
    assert.is(done.status, 'completed');
    assert.is(done.attempts, 1);
    assert.is(requestsFor(key).length, 1, 'the speculated request was the run\'s only one');
    assert.ok((await assistantTexts(done.id)).some((t) => t.includes(`answer ${n}`)));
  }
});

test('a history that grew elsewhere: the speculated attempt is cancelled, the run asks again with the history it committed', async () => {
  const thread = await newThread(f);
  const key = 'spec-history-grew';
  let answerSpeculated!: () => void;
  scripts.set(key, [
    { type: 'text', text: 'speculated answer', hold: new Promise<void>((r) => (answerSpeculated = r)) },
    { type: 'text', text: 'committed answer' },
  ]);
  // The row lock's holder appends a message (as another process's seal would) and commits.
  const lock = await lockThread(thread, `update threads set message_history = message_history || '[{"role": "user", "content": "grown-elsewhere"}]'::jsonb where id = $1`);
  let posting: ReturnType<typeof send> | null = null;
  try {
    posting = send(f, key, {}, thread);
    await until(() => requestsFor(key).length, (count) => count === 1, 5000);
    assert.not.ok(JSON.stringify(requestsFor(key)[0]!.body?.messages).includes('grown-elsewhere'));
  } finally {
    await lock.release();
  }
  const posted = await posting!;
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  const done = await waitForRun(f, posted.body.run.id);
  answerSpeculated(); // the cancelled request's answer, if anything still reads it, goes nowhere
  assert.is(done.status, 'completed');
  assert.is(done.attempts, 1);
  const requests = requestsFor(key);
  assert.is(requests.length, 2, 'asked again');
  assert.ok(JSON.stringify(requests[1]!.body?.messages).includes('grown-elsewhere'), 'with the history the run committed');
  const texts = await assistantTexts(done.id);
  assert.ok(texts.some((t) => t.includes('committed answer')), JSON.stringify(texts));
  assert.not.ok(texts.some((t) => t.includes('speculated answer')), 'nothing of the cancelled attempt is kept');
  const history = await query<{ h: string }>(f.db.url, 'select message_history::text as h from threads where id = $1', [thread]);
  assert.not.ok(history[0]!.h.includes('speculated answer'));
});

test('a replayed Idempotency-Key starts no run: its speculation is dropped and nothing is written', async () => {
  const thread = await newThread(f);
  const key = 'spec-replayed-key';
  scripts.set(key, [{ type: 'text', text: 'the only answer' }, { type: 'text', text: 'a second answer' }]);
  const body = { agent_id: f.agentId, payload: { content: [{ type: 'text', text: key }] } };
  const first = await f.client.post(`/api/v1/threads/${thread}/inbox`, body, { 'idempotency-key': key });
  assert.is(first.status, 201);
  await waitForRun(f, first.body.run.id);
  const again = await f.client.post(`/api/v1/threads/${thread}/inbox`, body, { 'idempotency-key': key });
  assert.is(again.status, 201);
  assert.is(again.body.run.id, first.body.run.id, 'the stored answer');
  const runs = await query<{ n: number }>(f.db.url, 'select count(*)::int as n from runs where thread_id = $1', [thread]);
  assert.is(runs[0]!.n, 1);
  const history = await query<{ h: string }>(f.db.url, 'select message_history::text as h from threads where id = $1', [thread]);
  assert.not.ok(history[0]!.h.includes('a second answer'));
  assert.equal((await assistantTexts(first.body.run.id)).filter((t) => t.includes('answer')).length, 1);
});

/** The text of a model request's last user message (the input the request answers). */
function lastUserText(body: unknown): string {
  const messages = ((body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? []).filter((m) => m.role === 'user');
  return JSON.stringify(messages.at(-1)?.content ?? '');
}

const speculations = () => speculationCounts(metricsPort);

test('concurrent inputs on shared threads: every input one run with one answer, each in its thread\'s history once', async () => {
  const before = await speculations();
  const threads = await Promise.all(Array.from({ length: 4 }, () => newThread(f)));
  const keys: Array<{ thread: string; key: string }> = [];
  for (const [t, thread] of threads.entries()) for (let i = 0; i < 6; i++) keys.push({ thread, key: `spec-load-${t}-${i}` });
  // An input may be asked more than once: a speculation discarded under this load (its thread
  // turned out busy, or its statement fell back to the transaction path, which speculates again)
  // has had its model request cancelled early. The model answers each key alike every time.
  for (const { key } of keys) scripts.set(key, Array.from({ length: 8 }, () => ({ type: 'text' as const, text: `reply ${key}` })));
  // Six inputs per thread at once: the first of each starts a run, the rest queue behind it.
  const posted = await Promise.all(keys.map(({ thread, key }) => send(f, key, {}, thread)));
  for (const p of posted) assert.is(p.status, 201, JSON.stringify(p.body));
  // Each input's run (queued ones get theirs when their turn comes): one run per input.
  await until(
    () => query<{ n: number }>(f.db.url, `select count(*)::int as n from runs where thread_id = any($1) and status = 'completed'`, [threads]),
    (rows) => rows[0]!.n === keys.length,
    30_000,
  );
  const runs = await query<{ id: string; source_entry_id: string; attempts: number }>(f.db.url, 'select id, source_entry_id, attempts from runs where thread_id = any($1)', [threads]);
  assert.is(runs.length, keys.length, 'one run per input');
  assert.is(new Set(runs.map((r) => r.source_entry_id)).size, keys.length);
  for (const { thread, key } of keys) {
    const history = (await query<{ h: string }>(f.db.url, 'select message_history::text as h from threads where id = $1', [thread]))[0]!.h;
    assert.is(history.split(`reply ${key}"`).length - 1, 1, `the answer to ${key} once in its thread's history`);
  }
  for (const run of runs) {
    const texts = await assistantTexts(run.id);
    assert.is(texts.length, 1, `one answer in run ${run.id}: ${JSON.stringify(texts)}`);
  }
  // Each input was asked; every request beyond one per input was a discarded speculation's.
  const after = await speculations();
  const asked = keys.map(({ key }) => f.model.requests.filter((r) => lastUserText(r.body).includes(key)).length);
  assert.ok(asked.every((n) => n >= 1), `every input asked: ${JSON.stringify(asked)}`);
  const extra = asked.reduce((sum, n) => sum + n - 1, 0);
  assert.ok(extra <= after.discarded - before.discarded, `requests beyond one per input (${extra}) are discarded speculations' (${after.discarded - before.discarded})`);
  // The thread's actor runs a process's inputs for one thread one at a time: the first of each
  // thread speculates and is adopted; the rest mostly find its run hosted here, and neither take
  // a slot nor speculate (one that comes after the thread freed up may, and is adopted too). So
  // the four first inputs always find a slot of the eight (WorkerHost.reserve): before, queued
  // inputs held slots for their statements' round trips and one first input could find none
  // (seen under load on a PVM machine, session 22).
  assert.ok(after.adopted - before.adopted >= threads.length, `adopted: ${JSON.stringify({ before, after })}`);
});

test.run();
